// The option table: one row per generation parameter, with its name on every surface that takes it, its
// type and valid range, Ollama's default, and where the engine takes it. Every dialect and both SDKs read
// parameters through this table (readers beside it), so exposing a parameter the engine has is one row.
//
//   ollama        Ollama's `options` key and Modelfile PARAMETER name (also /v1's `options` on profile a)
//   wire          names in OpenAI-style bodies: /v1 chat and text completions on every profile (vLLM's and
//                 llama-server's extra fields), Responses and Messages extra fields, vLLM's SamplingParams;
//                 the first name is the parameter's own, later ones synonyms
//   lmstudioRest  LM Studio's /api/v1/chat field
//   lmstudioKey   LM Studio's SDK config key under "llm.prediction." (`checkbox`: sent as {checked, value})
//   sdk           the conversation SDK's GenerationOptions name
//   engine        the engine setting it becomes: a sampler field, a generation field or a load option

/** `bias`: token id (as a string key) to a bias added to its logit, as OpenAI's logit_bias. */
export type OptionKind = "int" | "float" | "bool" | "strings" | "ints" | "bias";

export type EngineTarget =
  | { sampler: SamplerField }
  | { generation: "maxTokens" | "stop" | "draftTokens" | "minTokens" | "stopTokenIds" | "ignoreEos" | "includeStopString" | "skipSpecialTokens" }
  | { load: "contextPerSequence" | "batchSize" | "gpuLayers" | "threads" }
  | { prompt: "numKeep" }
  /** A fact for the engine's admission (RequestSchedule), not a sampling or generation setting. */
  | { schedule: "priority" }
  /** Accepted for compatibility; the engine has nothing to set (llama.cpp picks the device, models are mapped). */
  | { accepted: true };

type SamplerField =
  | "temperature" | "topK" | "topP" | "minP" | "typicalP" | "repeatLastN" | "repeatPenalty" | "presencePenalty" | "frequencyPenalty"
  | "seed" | "logitBias" | "xtcProbability" | "xtcThreshold" | "dryMultiplier" | "dryBase" | "dryAllowedLength" | "dryLastN" | "drySequenceBreakers";

export interface OptionRange {
  min?: number;
  max?: number;
  /** The minimum itself is not allowed. */
  aboveMin?: boolean;
  /** Most entries of a list, and most characters of each entry. */
  maxItems?: number;
  maxItemLength?: number;
}

export interface OptionRow {
  kind: OptionKind;
  ollama?: string;
  /** Ollama's default (api.DefaultOptions); unset where Ollama leaves it to the runner. */
  ollamaDefault?: number | boolean | string[];
  wire?: readonly string[];
  lmstudioRest?: string;
  lmstudioKey?: { key: string; checkbox?: boolean };
  sdk?: string;
  range?: OptionRange;
  /**
   * Ollama checks only the type of these (as Ollama does); every other surface checks the range too.
   * Parameters llamux added (XTC, DRY) are range-checked everywhere: the engine cannot take every value.
   */
  typeOnlyInOllama?: true;
  engine: EngineTarget;
  description: string;
}

const probability = { min: 0, max: 1 } satisfies OptionRange;

export const OPTIONS = {
  temperature: {
    kind: "float", ollama: "temperature", ollamaDefault: 0.8, wire: ["temperature"], lmstudioRest: "temperature",
    lmstudioKey: { key: "temperature" }, sdk: "temperature", range: { min: 0 }, typeOnlyInOllama: true,
    engine: { sampler: "temperature" }, description: "0 is greedy",
  },
  topK: {
    kind: "int", ollama: "top_k", ollamaDefault: 40, wire: ["top_k"], lmstudioRest: "top_k", lmstudioKey: { key: "topKSampling" },
    sdk: "topK", range: { min: -1 }, typeOnlyInOllama: true, engine: { sampler: "topK" }, description: "0 (or -1) disables",
  },
  topP: {
    kind: "float", ollama: "top_p", ollamaDefault: 0.9, wire: ["top_p"], lmstudioRest: "top_p", lmstudioKey: { key: "topPSampling", checkbox: true },
    sdk: "topP", range: { min: 0, aboveMin: true, max: 1 }, typeOnlyInOllama: true, engine: { sampler: "topP" }, description: "1 disables",
  },
  minP: {
    kind: "float", ollama: "min_p", ollamaDefault: 0, wire: ["min_p"], lmstudioRest: "min_p", lmstudioKey: { key: "minPSampling", checkbox: true },
    sdk: "minP", range: probability, typeOnlyInOllama: true, engine: { sampler: "minP" }, description: "0 disables",
  },
  typicalP: {
    kind: "float", ollama: "typical_p", ollamaDefault: 1, wire: ["typical_p"], range: { min: 0, aboveMin: true, max: 1 }, typeOnlyInOllama: true,
    engine: { sampler: "typicalP" }, description: "locally typical sampling; 1 disables",
  },
  repeatLastN: {
    kind: "int", ollama: "repeat_last_n", ollamaDefault: 64, wire: ["repeat_last_n"], range: { min: -1 }, typeOnlyInOllama: true,
    engine: { sampler: "repeatLastN" }, description: "tokens the penalties look back over; 0 disables, -1 is the context",
  },
  repeatPenalty: {
    kind: "float", ollama: "repeat_penalty", ollamaDefault: 1, wire: ["repeat_penalty", "repetition_penalty"], lmstudioRest: "repeat_penalty",
    lmstudioKey: { key: "repeatPenalty", checkbox: true }, sdk: "repetitionPenalty", range: { min: 0, aboveMin: true }, typeOnlyInOllama: true,
    engine: { sampler: "repeatPenalty" }, description: "above 1 discourages repetition; 1 disables (vLLM calls it repetition_penalty)",
  },
  presencePenalty: {
    kind: "float", ollama: "presence_penalty", ollamaDefault: 0, wire: ["presence_penalty"], lmstudioKey: { key: "llama.presencePenalty", checkbox: true },
    sdk: "presencePenalty", range: { min: -2, max: 2 }, typeOnlyInOllama: true, engine: { sampler: "presencePenalty" }, description: "0 disables",
  },
  frequencyPenalty: {
    kind: "float", ollama: "frequency_penalty", ollamaDefault: 0, wire: ["frequency_penalty"], lmstudioKey: { key: "llama.frequencyPenalty", checkbox: true },
    sdk: "frequencyPenalty", range: { min: -2, max: 2 }, typeOnlyInOllama: true, engine: { sampler: "frequencyPenalty" }, description: "0 disables",
  },
  seed: {
    kind: "int", ollama: "seed", ollamaDefault: -1, wire: ["seed"], lmstudioKey: { key: "seed", checkbox: true }, sdk: "seed", typeOnlyInOllama: true,
    engine: { sampler: "seed" }, description: "-1 (or unset) draws a random seed",
  },
  logitBias: {
    kind: "bias", wire: ["logit_bias"], engine: { sampler: "logitBias" },
    description: "token id to a bias added to its logit (clamped to -100..100)",
  },
  xtcProbability: {
    kind: "float", ollama: "xtc_probability", wire: ["xtc_probability"], lmstudioKey: { key: "llama.xtcProbability", checkbox: true },
    sdk: "xtcProbability", range: probability, engine: { sampler: "xtcProbability" },
    description: "XTC: chance of removing the likeliest tokens above xtc_threshold; 0 disables",
  },
  xtcThreshold: {
    kind: "float", ollama: "xtc_threshold", wire: ["xtc_threshold"], lmstudioKey: { key: "llama.xtcThreshold", checkbox: true },
    sdk: "xtcThreshold", range: probability, engine: { sampler: "xtcThreshold" },
    description: "XTC: tokens at least this likely may be removed (default 0.1; above 0.5 disables)",
  },
  dryMultiplier: {
    kind: "float", ollama: "dry_multiplier", wire: ["dry_multiplier"], sdk: "dryMultiplier", range: { min: 0 }, engine: { sampler: "dryMultiplier" },
    description: "DRY repetition penalty: multiplier × base^(repeat length − allowed length); 0 disables",
  },
  dryBase: {
    kind: "float", ollama: "dry_base", wire: ["dry_base"], sdk: "dryBase", range: { min: 1 }, engine: { sampler: "dryBase" },
    description: "DRY: base of the growing penalty (default 1.75, at least 1)",
  },
  dryAllowedLength: {
    kind: "int", ollama: "dry_allowed_length", wire: ["dry_allowed_length"], sdk: "dryAllowedLength", range: { min: 0 },
    engine: { sampler: "dryAllowedLength" }, description: "DRY: repeats up to this many tokens go unpenalised (default 2)",
  },
  dryPenaltyLastN: {
    kind: "int", ollama: "dry_penalty_last_n", wire: ["dry_penalty_last_n"], sdk: "dryPenaltyLastN", range: { min: -1 },
    engine: { sampler: "dryLastN" }, description: "DRY: tokens scanned for repeats; 0 disables, -1 (default) is the context",
  },
  drySequenceBreakers: {
    kind: "strings", ollama: "dry_sequence_breakers", wire: ["dry_sequence_breakers"], sdk: "drySequenceBreakers",
    range: { min: 1, maxItems: 32, maxItemLength: 40 }, engine: { sampler: "drySequenceBreakers" },
    description: 'DRY: text that ends a repeat (default "\\n", ":", "\\"", "*"); 1 to 32 strings of 1 to 40 characters',
  },
  maxTokens: {
    kind: "int", ollama: "num_predict", ollamaDefault: -1, lmstudioRest: "max_output_tokens", lmstudioKey: { key: "maxPredictedTokens", checkbox: true },
    sdk: "maxTokens", typeOnlyInOllama: true, engine: { generation: "maxTokens" },
    description: "most tokens to generate; -1 and -2 mean until the context is full (each API's own limit field sets it too)",
  },
  stop: {
    kind: "strings", ollama: "stop", ollamaDefault: [], lmstudioKey: { key: "stopStrings" }, range: { maxItems: 64 }, typeOnlyInOllama: true,
    engine: { generation: "stop" }, description: "text that ends generation",
  },
  minTokens: {
    kind: "int", wire: ["min_tokens"], range: { min: 0 }, engine: { generation: "minTokens" },
    description: "end-of-generation tokens cannot be sampled before this many tokens",
  },
  stopTokenIds: {
    kind: "ints", wire: ["stop_token_ids"], range: { min: 0 }, engine: { generation: "stopTokenIds" },
    description: "token ids that end generation as end-of-generation does",
  },
  ignoreEos: { kind: "bool", wire: ["ignore_eos"], engine: { generation: "ignoreEos" }, description: "keep generating past end-of-generation tokens" },
  includeStopString: {
    kind: "bool", wire: ["include_stop_str_in_output"], engine: { generation: "includeStopString" },
    description: "keep the stop string that ended generation in the output",
  },
  skipSpecialTokens: {
    kind: "bool", wire: ["skip_special_tokens"], engine: { generation: "skipSpecialTokens" },
    description: 'leave special tokens (such as "<|im_end|>") out of the text (default true)',
  },
  draftTokens: {
    kind: "int", ollama: "draft_num_predict", ollamaDefault: 4, typeOnlyInOllama: true, engine: { generation: "draftTokens" },
    description: "most draft tokens per step for a model with a draft model (Modelfile DRAFT); 0 turns speculative decoding off; without a draft model nothing is drafted",
  },
  priority: {
    kind: "int", wire: ["priority"], engine: { schedule: "priority" },
    description: "vLLM's request priority: lower goes first among one key's waiting requests (default 0)",
  },
  numKeep: {
    kind: "int", ollama: "num_keep", ollamaDefault: 4, typeOnlyInOllama: true, engine: { prompt: "numKeep" },
    description: "prompt tokens kept at the start when a long prompt is cut",
  },
  contextLength: {
    kind: "int", ollama: "num_ctx", ollamaDefault: 4096, lmstudioRest: "context_length", range: { min: 4 },
    engine: { load: "contextPerSequence" }, description: "context per sequence in tokens (loads the model with it)",
  },
  batchSize: {
    kind: "int", ollama: "num_batch", ollamaDefault: 512, typeOnlyInOllama: true, engine: { load: "batchSize" },
    description: "most tokens per decode step",
  },
  gpuLayers: {
    kind: "int", ollama: "num_gpu", ollamaDefault: -1, typeOnlyInOllama: true, engine: { load: "gpuLayers" },
    description: "layers on the GPU; -1 lets llamux decide, 0 is CPU only",
  },
  mainGpu: { kind: "int", ollama: "main_gpu", typeOnlyInOllama: true, engine: { accepted: true }, description: "accepted; llama.cpp picks the device" },
  useMmap: { kind: "bool", ollama: "use_mmap", typeOnlyInOllama: true, engine: { accepted: true }, description: "accepted; models are always memory-mapped" },
  threads: {
    kind: "int", ollama: "num_thread", ollamaDefault: 0, typeOnlyInOllama: true, engine: { load: "threads" },
    description: "decode threads, fixed; 0 (or unset) lets llamux pick up to the physical cores, fewer while other work holds them",
  },
} as const satisfies Record<string, OptionRow>;

export type OptionKey = keyof typeof OPTIONS;

/**
 * Names Ollama once had. Requests may still send them in `options`: ignored with a warning. In a Modelfile,
 * Ollama's `deprecatedParameters` only warn; the others (numa, tfs_z, num_gqa) are unknown parameters there.
 */
export const REMOVED_OLLAMA_OPTIONS: ReadonlyMap<string, { modelfile: "warn" | "unknown" }> = new Map<string, { modelfile: "warn" | "unknown" }>([
  ...["mirostat", "mirostat_tau", "mirostat_eta", "penalize_newline", "low_vram", "f16_kv", "logits_all", "vocab_only", "use_mlock"]
    .map((name) => [name, { modelfile: "warn" as const }] as const),
  ...["numa", "tfs_z", "num_gqa"].map((name) => [name, { modelfile: "unknown" as const }] as const),
]);
