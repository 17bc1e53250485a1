// What a model can do, read from its GGUF header (never its weights), in Ollama's capability words.
import { GgufValueType, type GgufHeader, ggufArchKey, ggufBool, ggufString } from "./gguf.ts";

/** `speech` is llamux's word for a model that produces audio (/v1/audio/speech); Ollama has no such model. */
export type Capability = "completion" | "tools" | "insert" | "vision" | "audio" | "speech" | "embedding" | "thinking";

/** Architectures that only embed (no generation); others embed only when their file says how to pool. */
const EMBEDDING_ARCHITECTURES = new Set(["bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert", "neo-bert", "t5encoder"]);

/** Tokens that only models trained for tool calls have (Hermes/Qwen, LFM2, Llama 3.1, Mistral). */
const TOOL_TOKENS = ["<tool_call>", "<|tool_call_start|>", "<|python_tag|>", "[TOOL_CALLS]", "<|tool_calls_section_begin|>"];
const THINKING_TOKENS = ["<think>", "<|channel|>", "<seed:think>"];

export function isEmbeddingHeader(header: GgufHeader): boolean {
  const architecture = ggufString(header, "general.architecture") ?? "";
  return EMBEDDING_ARCHITECTURES.has(architecture) || header.metadata.has(ggufArchKey(header, "pooling_type"));
}

/** The vocabulary's token strings, or an empty list when the header was read without long arrays. */
function tokensOf(header: GgufHeader): Set<string> {
  const kv = header.metadata.get("tokenizer.ggml.tokens");
  if (kv?.type !== GgufValueType.ARRAY || kv.itemType !== GgufValueType.STRING || kv.value === null) return new Set();
  return new Set(kv.value as string[]);
}

export interface CapabilityHints {
  /** a vision projector is attached (a Modelfile FROM of an mmproj file, a hub mmproj sibling) */
  projector?: boolean;
  /** the attached projector has an audio encoder (libmtmd's mtmd_support_audio) */
  audio?: boolean;
  /** the attached projector generates audio: a text-to-speech model */
  speech?: boolean;
  /** the model's Go template (Ollama TEMPLATE), which decides `insert` and can add `tools` and `thinking` */
  goTemplate?: string;
}

/**
 * Capabilities in Ollama's order. Reads the chat template and, when the header holds it, the vocabulary
 * (read the header without `maxArrayLength` for the token checks).
 */
export function detectCapabilities(header: GgufHeader, hints: CapabilityHints = {}): Capability[] {
  if (isEmbeddingHeader(header)) return ["embedding"];
  const capabilities: Capability[] = ["completion"];
  const template = ggufString(header, "tokenizer.chat_template") ?? "";
  const goTemplate = hints.goTemplate ?? "";
  const tokens = tokensOf(header);
  const hasToken = (list: string[]) => list.some((token) => tokens.has(token));
  if (/\btools\b/.test(template) || /\.Tools\b/.test(goTemplate) || hasToken(TOOL_TOKENS)) capabilities.push("tools");
  if (/\.Suffix\b/.test(goTemplate)) capabilities.push("insert");
  const visionInFile = ggufBool(header, "clip.has_vision_encoder") === true;
  if (hints.projector || visionInFile) capabilities.push("vision");
  if (hints.audio || ggufBool(header, "clip.has_audio_encoder") === true) capabilities.push("audio");
  if (hints.speech) capabilities.push("speech");
  if (/enable_thinking|reasoning_content|<think>/.test(template) || /\.Think\b/.test(goTemplate) || hasToken(THINKING_TOKENS)) capabilities.push("thinking");
  return capabilities;
}
