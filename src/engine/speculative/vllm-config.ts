// vLLM's speculative_config ({"model": PATH, "num_speculative_tokens": N} or {"method": "ngram", ...})
// as SpeculativeOptions: shared by `serve --speculative-config` and the SDK's LLM({ speculative_config }).
import type { SpeculativeOptions } from "./options.ts";

export interface VllmSpeculativeConfig {
  /** A draft model's GGUF path: speculation with a draft model. */
  model?: string | null;
  /** "ngram" (prompt lookup), or "draft_model" (the default when `model` is given). */
  method?: string | null;
  num_speculative_tokens?: number | null;
  prompt_lookup_max?: number | null;
  prompt_lookup_min?: number | null;
}

/** Keys llamux reads; others are ignored (the caller may warn). */
export const VLLM_SPECULATIVE_KEYS: ReadonlySet<string> = new Set(["model", "method", "num_speculative_tokens", "prompt_lookup_max", "prompt_lookup_min", "draft_tensor_parallel_size"]);

function numberField(config: Record<string, unknown>, key: string): number | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number") throw new TypeError(`speculative_config "${key}" must be a number, got ${JSON.stringify(value)}`);
  return value;
}

/** Throws TypeError/RangeError naming the offending field. */
export function fromVllmSpeculativeConfig(config: unknown): SpeculativeOptions {
  if (typeof config !== "object" || config === null || Array.isArray(config)) throw new TypeError("speculative_config must be an object");
  const fields = config as Record<string, unknown>;
  const model = fields.model;
  if (model !== undefined && model !== null && typeof model !== "string") throw new TypeError(`speculative_config "model" must be a file path`);
  const method = fields.method ?? (model ? "draft_model" : undefined);
  const maxDraftTokens = numberField(fields, "num_speculative_tokens");
  if (method === "ngram") {
    const ngramMax = numberField(fields, "prompt_lookup_max");
    const ngramMin = numberField(fields, "prompt_lookup_min");
    return {
      method: "ngram",
      ...(maxDraftTokens !== undefined ? { maxDraftTokens } : {}),
      ...(ngramMax !== undefined ? { ngramMax } : {}),
      ...(ngramMin !== undefined ? { ngramMin } : {}),
    };
  }
  if (method === "draft_model") {
    if (!model) throw new RangeError(`speculative_config method "draft_model" needs "model": a draft GGUF file`);
    return { method: "draft", draftModelPath: model as string, ...(maxDraftTokens !== undefined ? { maxDraftTokens } : {}) };
  }
  throw new RangeError(`speculative_config method ${JSON.stringify(method ?? null)} is not supported (llamux has "ngram" and a draft "model")`);
}
