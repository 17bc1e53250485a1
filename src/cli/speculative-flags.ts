// Speculative decoding on `llamux serve`: llama-server's flags, under their current names (--spec-type,
// --spec-draft-model, --spec-draft-n-max, --spec-draft-p-min, --spec-ngram-simple-size-n/-m) and their
// older ones (--model-draft, --draft-max, --draft-p-min), and vLLM's --speculative-config JSON
// ('{"model": PATH, "num_speculative_tokens": N}' or
// '{"method": "ngram", "num_speculative_tokens": N, "prompt_lookup_max": 4, "prompt_lookup_min": 1}').
//
// One difference from llama-server on purpose: there a draft model without --spec-type draft-simple is
// loaded and never used; here a draft model means drafting with it (--spec-type none turns it off).
import { existsSync } from "node:fs";
import { resolveSpeculativeOptions, type SpeculativeOptions } from "../engine/speculative/options.ts";
import { fromVllmSpeculativeConfig, VLLM_SPECULATIVE_KEYS } from "../engine/speculative/vllm-config.ts";
import { UsageError, numberOption } from "../usage-error.ts";
import { logger } from "../log.ts";
import type { Flags } from "./help-layout.ts";

const log = logger("serve");

export const speculativeFlags = {
  "model-draft": { type: "string", value: "FILE", help: "speculative decoding: a small draft model with MODEL's vocabulary proposes tokens that MODEL verifies several at a time (greedy output is unchanged)" },
  "draft-max": { type: "string", value: "N", help: "most draft tokens per step per sequence (default 4, at most 32)" },
  "draft-p-min": { type: "string", value: "P", help: "end a draft at a token the draft model gives less than probability P (default 0)" },
  "speculative-config": { type: "string", value: "JSON", help: `vLLM's form: '{"model": FILE, "num_speculative_tokens": N}', or n-gram lookup in the prompt with no draft model: '{"method": "ngram", "num_speculative_tokens": N, "prompt_lookup_max": 4, "prompt_lookup_min": 1}'` },
  "spec-type": { type: "string", value: "TYPE", help: "llama-server's current names: draft-simple (a draft model), ngram-simple (n-gram lookup in the prompt) or none" },
  "spec-draft-model": { type: "string", value: "FILE", help: "the same as --model-draft" },
  "spec-draft-n-max": { type: "string", value: "N", help: "the same as --draft-max" },
  "spec-draft-p-min": { type: "string", value: "P", help: "the same as --draft-p-min" },
  "spec-ngram-simple-size-n": { type: "string", value: "N", help: "ngram-simple: look up exactly N tokens (default: 4 down to 1)" },
  "spec-ngram-simple-size-m": { type: "string", value: "M", help: "ngram-simple: most tokens drafted after a match (default 4, at most 32)" },
} as const satisfies Flags;

/** llama-server's --spec-type names llamux runs; its other kinds (EAGLE-3, MTP, ...) need model parts llamux does not load. */
const SPEC_TYPES = ["none", "draft-simple", "ngram-simple"] as const;


export type SpeculativeFlagValues = { [K in keyof typeof speculativeFlags]?: string };

/** vLLM's --speculative-config as SpeculativeOptions. */
export function parseSpeculativeConfig(text: string): SpeculativeOptions {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    throw new UsageError(`--speculative-config must be a JSON object such as '{"method": "ngram", "num_speculative_tokens": 4}', got ${text}`);
  }
  if (typeof config === "object" && config !== null) {
    for (const key of Object.keys(config)) if (!VLLM_SPECULATIVE_KEYS.has(key)) log.warn(`--speculative-config: "${key}" is ignored`);
  }
  try {
    return fromVllmSpeculativeConfig(config);
  } catch (error) {
    throw new UsageError(`--speculative-config: ${(error as Error).message}`);
  }
}

/** A value given under either of two names of the same flag; both given with different values is an error. */
function eitherName(values: SpeculativeFlagValues, name: keyof SpeculativeFlagValues, alias: keyof SpeculativeFlagValues): string | undefined {
  const a = values[name];
  const b = values[alias];
  if (a !== undefined && b !== undefined && a !== b) throw new UsageError(`--${name} and --${alias} are the same setting: give one`);
  return a ?? b;
}

/** --spec-type as one of the kinds llamux runs (undefined when not given). */
function specType(value: string | undefined): (typeof SPEC_TYPES)[number] | undefined {
  if (value === undefined) return undefined;
  const types = [...new Set(value.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
  for (const type of types) {
    if (!(SPEC_TYPES as readonly string[]).includes(type)) {
      throw new UsageError(`--spec-type ${type} is not supported: llamux runs ${SPEC_TYPES.join(", ")}`);
    }
  }
  const kinds = types.filter((t) => t !== "none");
  if (kinds.length > 1) throw new UsageError(`--spec-type ${value}: llamux runs one kind of speculation at a time`);
  return (kinds[0] ?? "none") as (typeof SPEC_TYPES)[number];
}

/** The serve flags as SpeculativeOptions (undefined: no speculation); checked now so a bad value stops start-up. */
export function speculativeFromFlags(values: SpeculativeFlagValues): SpeculativeOptions | undefined {
  const draftModel = eitherName(values, "model-draft", "spec-draft-model");
  const draftMax = eitherName(values, "draft-max", "spec-draft-n-max");
  const draftPMin = eitherName(values, "draft-p-min", "spec-draft-p-min");
  const type = specType(values["spec-type"]);
  const ngramSizeN = values["spec-ngram-simple-size-n"];
  const ngramSizeM = values["spec-ngram-simple-size-m"];
  if (values["speculative-config"] !== undefined && (draftModel !== undefined || type !== undefined)) {
    throw new UsageError("--speculative-config and llama-server's --model-draft / --spec-type both choose how to speculate: give one");
  }
  if ((ngramSizeN !== undefined || ngramSizeM !== undefined) && type !== "ngram-simple") {
    throw new UsageError("--spec-ngram-simple-size-n and --spec-ngram-simple-size-m need --spec-type ngram-simple");
  }
  if (type === "draft-simple" && draftModel === undefined) throw new UsageError("--spec-type draft-simple needs --spec-draft-model (or --model-draft)");
  if (type === "ngram-simple" && draftModel !== undefined) throw new UsageError("--spec-type ngram-simple drafts from the prompt: leave out the draft model");

  let options: SpeculativeOptions | undefined;
  if (values["speculative-config"] !== undefined) options = parseSpeculativeConfig(values["speculative-config"]);
  else if (type === "ngram-simple") {
    options = { method: "ngram" };
    if (ngramSizeN !== undefined) options.ngramMax = options.ngramMin = numberOption(ngramSizeN, "spec-ngram-simple-size-n");
    if (ngramSizeM !== undefined) options.maxDraftTokens = numberOption(ngramSizeM, "spec-ngram-simple-size-m");
  } else if (draftModel !== undefined && type !== "none") options = { method: "draft", draftModelPath: draftModel };
  if (type === "none" && draftModel !== undefined) log.warn("--spec-type none: the draft model is not loaded");
  if (!options) {
    if ((draftMax !== undefined || draftPMin !== undefined) && type !== "none") throw new UsageError("--draft-max and --draft-p-min need --model-draft");
    return undefined;
  }
  if (draftMax !== undefined) options.maxDraftTokens = numberOption(draftMax, "draft-max");
  if (draftPMin !== undefined) options.minDraftProbability = numberOption(draftPMin, "draft-p-min");
  if (options.draftModelPath !== undefined && !existsSync(options.draftModelPath)) {
    throw new UsageError(`Cannot load draft model "${options.draftModelPath}": no such file`);
  }
  try {
    resolveSpeculativeOptions(options);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return options;
}
