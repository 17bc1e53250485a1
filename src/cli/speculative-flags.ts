// Speculative decoding on `llamux serve`: llama-server's --model-draft / --draft-max / --draft-p-min and
// vLLM's --speculative-config JSON ('{"model": PATH, "num_speculative_tokens": N}' or
// '{"method": "ngram", "num_speculative_tokens": N, "prompt_lookup_max": 4, "prompt_lookup_min": 1}').
import { existsSync } from "node:fs";
import { resolveSpeculativeOptions, type SpeculativeOptions } from "../engine/speculative/options.ts";
import { fromVllmSpeculativeConfig, VLLM_SPECULATIVE_KEYS } from "../engine/speculative/vllm-config.ts";
import { UsageError } from "./usage-error.ts";
import { logger } from "../log.ts";

const log = logger("serve");

export const speculativeFlags = {
  "model-draft": { type: "string" },
  "draft-max": { type: "string" },
  "draft-p-min": { type: "string" },
  "speculative-config": { type: "string" },
} as const;

export const speculativeFlagsHelp = `      --model-draft FILE        speculative decoding: a small draft model with MODEL's vocabulary proposes
                                tokens that MODEL verifies several at a time (greedy output is unchanged)
      --draft-max N             most draft tokens per step per sequence (default 4, at most 32)
      --draft-p-min P           end a draft at a token the draft model gives less than probability P (default 0)
      --speculative-config JSON vLLM's form: '{"model": FILE, "num_speculative_tokens": N}', or n-gram lookup in
                                the prompt with no draft model: '{"method": "ngram", "num_speculative_tokens": N,
                                "prompt_lookup_max": 4, "prompt_lookup_min": 1}'`;

export interface SpeculativeFlagValues {
  "model-draft"?: string;
  "draft-max"?: string;
  "draft-p-min"?: string;
  "speculative-config"?: string;
}

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

/** The serve flags as SpeculativeOptions (undefined: no speculation); checked now so a bad value stops start-up. */
export function speculativeFromFlags(values: SpeculativeFlagValues): SpeculativeOptions | undefined {
  if (values["model-draft"] !== undefined && values["speculative-config"] !== undefined) {
    throw new UsageError("--model-draft and --speculative-config both choose a draft: give one");
  }
  let options: SpeculativeOptions | undefined;
  if (values["speculative-config"] !== undefined) options = parseSpeculativeConfig(values["speculative-config"]);
  else if (values["model-draft"] !== undefined) options = { method: "draft", draftModelPath: values["model-draft"] };
  if (!options) {
    if (values["draft-max"] !== undefined || values["draft-p-min"] !== undefined) throw new UsageError("--draft-max and --draft-p-min need --model-draft");
    return undefined;
  }
  if (values["draft-max"] !== undefined) options.maxDraftTokens = Number(values["draft-max"]);
  if (values["draft-p-min"] !== undefined) options.minDraftProbability = Number(values["draft-p-min"]);
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
