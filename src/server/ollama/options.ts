// Ollama's `options` map: checked against the option table, merged over the model's own parameters,
// and translated into the engine's load options, sampler settings and generation limits.
import type { SamplerSettings } from "../../engine/types.ts";
import type { EngineOptions, GenerateRequest } from "../../engine/types.ts";
import { logger } from "../../log.ts";
import { badRequest } from "../api-error.ts";
import type { ServedModel } from "../model-service.ts";
import { isOptionName, ollamaOptions, removedOptions, type OllamaOptions, type OptionKind } from "./defaults.ts";

const log = logger("ollama");

const kindWords: Record<OptionKind, string> = { int: "integer", float: "float", bool: "boolean", strings: "array of strings" };

function checkValue(name: string, kind: OptionKind, value: unknown): unknown {
  const wrongType = () => badRequest(`option "${name}" must be of type ${kindWords[kind]}`, `options.${name}`);
  switch (kind) {
    case "int":
      if (typeof value !== "number" || !Number.isFinite(value)) throw wrongType();
      // Ollama converts a JSON number to the Go int field, dropping any fraction.
      return Math.trunc(value);
    case "float":
      if (typeof value !== "number" || !Number.isFinite(value)) throw wrongType();
      return value;
    case "bool":
      if (typeof value !== "boolean") throw wrongType();
      return value;
    case "strings":
      if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) throw wrongType();
      return value;
  }
}

/**
 * The known options of a request's `options` (or a model's parameters), type-checked. Unknown and
 * removed options are ignored with a warning, as Ollama does; a known one of the wrong type is a 400.
 */
export function parseOptions(raw: Record<string, unknown> | undefined): OllamaOptions {
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (value === null || value === undefined) continue;
    if (!isOptionName(name)) {
      log.warn(removedOptions.has(name) ? `option "${name}" is no longer supported by Ollama; ignored` : `invalid option provided: "${name}"; ignored`);
      continue;
    }
    options[name] = checkValue(name, ollamaOptions[name].kind, value);
  }
  return options as OllamaOptions;
}

/** Lowest first: the model's parameters, then the request's options (both already parsed). */
export function mergeOptions(modelParameters: OllamaOptions, requestOptions: OllamaOptions): OllamaOptions {
  return { ...modelParameters, ...requestOptions };
}

/** A request's options over the model's Modelfile parameters (a store model's params layer). */
export function modelOptions(model: ServedModel, requestOptions: Record<string, unknown> | null | undefined): OllamaOptions {
  return mergeOptions(parseOptions(model.stored?.parameters), parseOptions(requestOptions ?? undefined));
}

function valueOf<K extends keyof OllamaOptions>(options: OllamaOptions, name: K): NonNullable<OllamaOptions[K]> {
  return (options[name] ?? ollamaOptions[name].default) as NonNullable<OllamaOptions[K]>;
}

/**
 * Load options the request (or model) sets explicitly. Defaults are left to the server so that a
 * request that sets nothing shares the engine every other route uses.
 */
export function loadOverrides(options: OllamaOptions): Partial<EngineOptions> {
  const overrides: Partial<EngineOptions> = {};
  if (options.num_ctx !== undefined) {
    if (options.num_ctx < 4) throw badRequest(`option "num_ctx" must be at least 4, got ${options.num_ctx}`, "options.num_ctx");
    overrides.contextPerSequence = options.num_ctx;
  }
  if (options.num_batch !== undefined && options.num_batch > 0) overrides.batchSize = options.num_batch;
  if (options.num_gpu !== undefined && options.num_gpu >= 0) overrides.gpuLayers = options.num_gpu;
  if (options.num_thread !== undefined && options.num_thread > 0) overrides.threads = options.num_thread;
  return overrides;
}

/** Sampler settings with Ollama's defaults for what the options leave unset. */
export function samplerSettings(options: OllamaOptions): Partial<SamplerSettings> {
  const seed = valueOf(options, "seed");
  return {
    temperature: valueOf(options, "temperature"),
    topK: Math.max(0, valueOf(options, "top_k")),
    topP: valueOf(options, "top_p"),
    minP: valueOf(options, "min_p"),
    typicalP: valueOf(options, "typical_p"),
    repeatLastN: valueOf(options, "repeat_last_n"),
    repeatPenalty: valueOf(options, "repeat_penalty"),
    presencePenalty: valueOf(options, "presence_penalty"),
    frequencyPenalty: valueOf(options, "frequency_penalty"),
    seed: seed < 0 ? Math.floor(Math.random() * 0xffffffff) : seed >>> 0,
  };
}

const samplerFieldOf = {
  temperature: "temperature", top_k: "topK", top_p: "topP", min_p: "minP", typical_p: "typicalP", repeat_last_n: "repeatLastN",
  repeat_penalty: "repeatPenalty", presence_penalty: "presencePenalty", frequency_penalty: "frequencyPenalty",
} as const satisfies Partial<Record<keyof OllamaOptions, keyof SamplerSettings>>;

/** Only the sampler settings the options set (a model's parameters as defaults on /v1, under the request's fields). */
export function explicitSamplerSettings(options: OllamaOptions): Partial<SamplerSettings> {
  const settings: Partial<SamplerSettings> = {};
  for (const [name, field] of Object.entries(samplerFieldOf) as Array<[keyof typeof samplerFieldOf, keyof typeof settings]>) {
    const value = options[name];
    if (value !== undefined) (settings as Record<string, unknown>)[field] = name === "top_k" ? Math.max(0, value) : value;
  }
  if (options.seed !== undefined && options.seed >= 0) settings.seed = options.seed >>> 0;
  return settings;
}

/** How long to generate and what ends it. */
export function generationLimits(options: OllamaOptions): Pick<GenerateRequest, "maxTokens" | "stop" | "draftTokens"> {
  const numPredict = valueOf(options, "num_predict");
  return {
    // draft tokens per step when the model has a draft (DRAFT); 0 turns speculation off for the request
    ...(options.draft_num_predict !== undefined ? { draftTokens: Math.max(0, options.draft_num_predict) } : {}),
    // -1 and -2 both mean "until the context is full"; the engine stops there.
    ...(numPredict >= 0 ? { maxTokens: numPredict } : {}),
    stop: valueOf(options, "stop").filter((stop) => stop !== ""),
  };
}

export function numKeep(options: OllamaOptions): number {
  return Math.max(0, valueOf(options, "num_keep"));
}
