// Ollama's runtime options (request `options` and Modelfile PARAMETERs) with Ollama's defaults: the one
// place they live, as Ollama's api.DefaultOptions() is. Precedence, lowest first: these defaults, the
// model's parameters, the request's options.

export type OptionKind = "int" | "float" | "bool" | "strings";

export interface OptionSpec {
  kind: OptionKind;
  /** Ollama's default; undefined where Ollama leaves it unset (the engine decides). */
  default: number | boolean | string[] | undefined;
  /** Read when a model loads: a different value needs another engine, not another sampler. */
  loadTime?: true;
  description: string;
}

/** Ollama's defaults where they are not the server's own (`num_ctx` comes from --ctx-size / OLLAMA_CONTEXT_LENGTH). */
export const ollamaOptions = {
  num_ctx: { kind: "int", default: 4096, loadTime: true, description: "context per sequence in tokens" },
  num_batch: { kind: "int", default: 512, loadTime: true, description: "most tokens per decode step" },
  num_gpu: { kind: "int", default: -1, loadTime: true, description: "layers on the GPU; -1 lets llamux decide, 0 is CPU only" },
  main_gpu: { kind: "int", default: undefined, loadTime: true, description: "accepted; llama.cpp picks the device" },
  use_mmap: { kind: "bool", default: undefined, loadTime: true, description: "accepted; models are always memory-mapped" },
  num_thread: { kind: "int", default: 0, loadTime: true, description: "decode threads; 0 is the physical core count" },
  num_keep: { kind: "int", default: 4, description: "prompt tokens kept at the start when a long prompt is cut" },
  num_predict: { kind: "int", default: -1, description: "most tokens to generate; -1 and -2 mean until the context is full" },
  temperature: { kind: "float", default: 0.8, description: "0 is greedy" },
  top_k: { kind: "int", default: 40, description: "0 disables" },
  top_p: { kind: "float", default: 0.9, description: "1 disables" },
  min_p: { kind: "float", default: 0, description: "0 disables" },
  typical_p: { kind: "float", default: 1, description: "1 disables" },
  repeat_last_n: { kind: "int", default: 64, description: "tokens the repeat penalty looks back over; 0 disables, -1 is num_ctx" },
  repeat_penalty: { kind: "float", default: 1, description: "1 disables (Ollama's default since v0.32.10)" },
  presence_penalty: { kind: "float", default: 0, description: "" },
  frequency_penalty: { kind: "float", default: 0, description: "" },
  seed: { kind: "int", default: -1, description: "-1 is random" },
  stop: { kind: "strings", default: [], description: "text that ends generation" },
  draft_num_predict: { kind: "int", default: 4, description: "most draft tokens per step for a model with a draft model (Modelfile DRAFT); 0 turns speculative decoding off; without a draft model nothing is drafted" },
} as const satisfies Record<string, OptionSpec>;

export type OptionName = keyof typeof ollamaOptions;

export type OllamaOptions = {
  [K in OptionName]?: (typeof ollamaOptions)[K]["kind"] extends "strings" ? string[] : (typeof ollamaOptions)[K]["kind"] extends "bool" ? boolean : number;
};

/** Options Ollama once had: requests may still send them, and they are ignored with a warning. */
export const removedOptions = new Set([
  "mirostat", "mirostat_tau", "mirostat_eta", "penalize_newline", "low_vram", "f16_kv", "logits_all", "vocab_only",
  "use_mlock", "numa", "tfs_z", "num_gqa",
]);

export function isOptionName(name: string): name is OptionName {
  return Object.hasOwn(ollamaOptions, name);
}
