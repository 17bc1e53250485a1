// How an engine speculates: the options a server or the SDK passes at load, and their bounds.

/** Speculative decoding of one engine. */
export interface SpeculativeOptions {
  /** "draft": a small draft model proposes tokens; "ngram": prompt lookup in the sequence's own tokens. */
  method: "draft" | "ngram";
  /** The draft model's GGUF (method "draft"): same vocabulary as the target, not larger than it. */
  draftModelPath?: string;
  /** Most tokens proposed per step per sequence (vLLM num_speculative_tokens, llama-server --draft-max). Default: 4. */
  maxDraftTokens?: number;
  /** Longest and shortest n-gram the lookup matches (vLLM prompt_lookup_max / prompt_lookup_min). Default: 4 and 1. */
  ngramMax?: number;
  ngramMin?: number;
  /** A draft ends at a token the draft model gives less than this probability (llama-server --draft-p-min). Default: 0. */
  minDraftProbability?: number;
}

export const DEFAULT_MAX_DRAFT_TOKENS = 4;
/** Upper bound on maxDraftTokens: each drafted token is one more row in the verify batch. */
export const MAX_DRAFT_TOKENS_LIMIT = 32;
export const DEFAULT_NGRAM_MAX = 4;
export const DEFAULT_NGRAM_MIN = 1;
/** The lookup scans at most this many of a sequence's latest tokens per step. */
export const NGRAM_SEARCH_WINDOW = 8192;

export interface ResolvedSpeculativeOptions {
  method: "draft" | "ngram";
  draftModelPath?: string;
  maxDraftTokens: number;
  ngramMax: number;
  ngramMin: number;
  minDraftProbability: number;
}

function integerIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`Cannot use speculative decoding: ${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** Fills in defaults and checks bounds; throws RangeError with the offending setting named. */
export function resolveSpeculativeOptions(options: SpeculativeOptions): ResolvedSpeculativeOptions {
  if (options.method !== "draft" && options.method !== "ngram") {
    throw new RangeError(`Cannot use speculative decoding: unknown method "${String(options.method)}" (use "draft" or "ngram")`);
  }
  if (options.method === "draft" && !options.draftModelPath) throw new RangeError("Cannot use speculative decoding: method \"draft\" needs a draft model");
  const ngramMax = integerIn("the largest n-gram", options.ngramMax ?? DEFAULT_NGRAM_MAX, 1, 64);
  const ngramMin = integerIn("the smallest n-gram", options.ngramMin ?? Math.min(DEFAULT_NGRAM_MIN, ngramMax), 1, ngramMax);
  const minDraftProbability = options.minDraftProbability ?? 0;
  if (!(minDraftProbability >= 0 && minDraftProbability <= 1)) {
    throw new RangeError(`Cannot use speculative decoding: the draft probability threshold must lie in [0, 1], got ${minDraftProbability}`);
  }
  return {
    method: options.method,
    ...(options.method === "draft" ? { draftModelPath: options.draftModelPath! } : {}),
    maxDraftTokens: integerIn("the number of draft tokens", options.maxDraftTokens ?? DEFAULT_MAX_DRAFT_TOKENS, 1, MAX_DRAFT_TOKENS_LIMIT),
    ngramMax,
    ngramMin,
    minDraftProbability,
  };
}
