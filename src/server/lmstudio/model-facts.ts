// What LM Studio's model listings say about a model that may not be loaded: read once per file from
// its GGUF header (never its weights).
import { detectCapabilities } from "../../store/capabilities.ts";
import { ggufArchKey, ggufNumber, ggufParameterCount, ggufString, readGgufHeaderSync } from "../../store/gguf.ts";
import { fileTypeName, formatParameterCount } from "../../store/model-config.ts";
import { quantizationOf } from "../../store/hub/quantization.ts";
import { basename } from "node:path";
import { projectorModalities } from "../../vision/projector-file.ts";

export interface ModelFacts {
  /** "llm", "vlm" (a vision projector is attached) or "embeddings" (LM Studio's v0 words) */
  type: "llm" | "vlm" | "embeddings";
  arch: string;
  /** e.g. "Q4_K_M"; from the file type, else the file name */
  quantization: string;
  /** the trained context length */
  maxContextLength: number;
  /** e.g. "1.2B" */
  paramsString: string;
  trainedForToolUse: boolean;
  reasoning: boolean;
  /** The projector takes audio (an llamux addition to LM Studio's capabilities). */
  audio: boolean;
  /** The projector generates audio: a text-to-speech model (an llamux addition: `speech`). */
  speech: boolean;
}

const cache = new Map<string, ModelFacts>();

/** Bits per weight LM Studio reports for common quantizations (llama.cpp's nominal sizes). */
const BITS_PER_WEIGHT: Record<string, number> = {
  F32: 32, F16: 16, BF16: 16, Q8_0: 8, Q6_K: 6, Q5_K_M: 5, Q5_K_S: 5, Q5_0: 5, Q5_1: 5, Q4_K_M: 4, Q4_K_S: 4, Q4_0: 4, Q4_1: 4,
  IQ4_XS: 4, IQ4_NL: 4, Q3_K_L: 3, Q3_K_M: 3, Q3_K_S: 3, Q2_K: 2,
};

export function bitsPerWeight(quantization: string): number | null {
  return BITS_PER_WEIGHT[quantization.toUpperCase()] ?? null;
}

export function modelFacts(model: { path: string; projectorPath?: string }): ModelFacts {
  const key = `${model.path}\u0000${model.projectorPath ?? ""}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const header = readGgufHeaderSync(model.path, { maxArrayLength: 0 });
  const modalities = model.projectorPath !== undefined ? projectorModalities(model.projectorPath) : { vision: false, audio: false, speech: false };
  const capabilities = detectCapabilities(header, { projector: modalities.vision, audio: modalities.audio && !modalities.speech, speech: modalities.speech });
  const facts: ModelFacts = {
    type: capabilities.includes("embedding") ? "embeddings" : capabilities.includes("vision") ? "vlm" : "llm",
    arch: ggufString(header, "general.architecture") ?? "unknown",
    quantization: fileTypeName(ggufNumber(header, "general.file_type")) ?? quantizationOf(basename(model.path)) ?? "unknown",
    maxContextLength: ggufNumber(header, ggufArchKey(header, "context_length")) ?? 0,
    paramsString: formatParameterCount(ggufParameterCount(header)),
    trainedForToolUse: capabilities.includes("tools"),
    reasoning: capabilities.includes("thinking"),
    audio: capabilities.includes("audio"),
    speech: capabilities.includes("speech"),
  };
  cache.set(key, facts);
  return facts;
}
