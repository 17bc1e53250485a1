// Option values as the engine takes them: sampler settings, generation fields, load options, and how much
// of a prompt to keep when it is cut. The one place where a parameter's wire meaning ("-1 is random",
// "0 disables", "negative means until the context is full") becomes the engine's.
import type { EngineOptions, GenerateRequest, RequestSchedule, SamplerSettings } from "../engine/types.ts";
import { OPTIONS, type OptionKey } from "./table.ts";
import type { OptionValues } from "./values.ts";

export type GenerationFields = Pick<
  GenerateRequest, "maxTokens" | "stop" | "draftTokens" | "minTokens" | "stopTokenIds" | "ignoreEos" | "includeStopString" | "renderSpecialTokens"
>;

export interface EngineSettings {
  sampling: Partial<SamplerSettings>;
  generation: GenerationFields;
  load: Partial<EngineOptions>;
  /** Prompt tokens kept at the start when a long prompt is cut (Ollama's num_keep). */
  numKeep?: number;
  /** Facts for the engine's admission that came as parameters (vLLM's priority). */
  schedule?: Pick<RequestSchedule, "priority">;
}

const randomSeed = () => Math.floor(Math.random() * 0xffffffff);

/** A value in the engine's terms; undefined leaves the engine's default. */
function samplerValue(field: keyof SamplerSettings, value: unknown): unknown {
  switch (field) {
    case "topK":
      return Math.max(0, value as number);
    case "seed":
      return (value as number) < 0 ? randomSeed() : (value as number) >>> 0;
    case "logitBias":
      return Object.entries(value as Record<string, number>).map(([token, bias]) => [Number(token), Math.max(-100, Math.min(100, bias))]);
    default:
      return value;
  }
}

function loadValue(field: keyof EngineOptions, value: number): number | undefined {
  // Ollama's "let the server decide" values: a non-positive batch or thread count, a negative layer count.
  if (field === "gpuLayers") return value >= 0 ? value : undefined;
  if (field === "batchSize" || field === "threads") return value > 0 ? value : undefined;
  return value;
}

/**
 * The engine settings of merged option values. The seed is always set (drawn at random when unset or
 * negative), so that n choices of a request can take seed, seed+1, ….
 */
export function engineSettings(values: OptionValues): EngineSettings {
  const sampling: Record<string, unknown> = {};
  const generation: GenerationFields = {};
  const load: Record<string, unknown> = {};
  let numKeep: number | undefined;
  let schedule: EngineSettings["schedule"];
  for (const [key, value] of Object.entries(values) as Array<[OptionKey, unknown]>) {
    if (value === undefined) continue;
    const target = OPTIONS[key].engine;
    if ("sampler" in target) sampling[target.sampler] = samplerValue(target.sampler, value);
    else if ("load" in target) {
      const loaded = loadValue(target.load, value as number);
      if (loaded !== undefined) load[target.load] = loaded;
    } else if ("prompt" in target) numKeep = Math.max(0, value as number);
    else if ("schedule" in target) schedule = { priority: value as number };
    else if ("generation" in target) {
      switch (target.generation) {
        case "maxTokens":
          // -1 and -2 (Ollama) mean "until the context is full": no limit for the engine.
          if ((value as number) >= 0) generation.maxTokens = value as number;
          break;
        case "stop":
          generation.stop = (value as string[]).filter((stop) => stop !== "");
          break;
        case "draftTokens":
          generation.draftTokens = Math.max(0, value as number);
          break;
        case "minTokens":
          if ((value as number) > 0) generation.minTokens = value as number;
          break;
        case "stopTokenIds":
          if ((value as number[]).length) generation.stopTokenIds = value as number[];
          break;
        case "skipSpecialTokens":
          if (value === false) generation.renderSpecialTokens = true;
          break;
        default:
          generation[target.generation] = value as boolean;
      }
    }
  }
  if (sampling.seed === undefined) sampling.seed = randomSeed();
  return {
    sampling: sampling as Partial<SamplerSettings>, generation, load: load as Partial<EngineOptions>,
    ...(numKeep !== undefined ? { numKeep } : {}), ...(schedule ? { schedule } : {}),
  };
}
