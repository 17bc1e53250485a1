// The config blob of a manifest, described from a GGUF header as Ollama writes it: format, family,
// parameter size ("1.2B") and quantization ("Q4_K_M").
import { type GgufHeader, ggufNumber, ggufParameterCount, ggufString } from "./gguf.ts";
import type { ModelConfig } from "./resolved-model.ts";

/** llama_ftype numbers (llama.h) by name. */
const FILE_TYPES: Record<number, string> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M",
  13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS",
  21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
  29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4", 39: "NVFP4", 40: "Q1_0", 41: "Q2_0",
};

/** The quantization name of a llama_ftype number ("Q4_K_M"), or undefined for an unknown one. */
export function fileTypeName(fileType: number | undefined): string | undefined {
  return fileType === undefined ? undefined : FILE_TYPES[fileType];
}

/** A parameter count as Ollama shows it: "494.03M", "1.2B", "8B". */
export function formatParameterCount(count: number): string {
  if (count >= 1e9) {
    const billions = count / 1e9;
    return Number.isInteger(billions) ? `${billions}B` : `${billions.toFixed(1)}B`;
  }
  if (count >= 1e6) {
    const millions = count / 1e6;
    return Number.isInteger(millions) ? `${millions}M` : `${millions.toFixed(2)}M`;
  }
  if (count >= 1e3) return `${Math.round(count / 1e3)}K`;
  return String(count);
}

/** The config blob for a model layer with this header; `projector` adds the projector's family. */
export function modelConfigFromHeader(header: GgufHeader, projector?: GgufHeader): ModelConfig {
  const family = ggufString(header, "general.architecture") ?? "unknown";
  const families = [family];
  const projectorFamily = projector && ggufString(projector, "general.architecture");
  if (projectorFamily && !families.includes(projectorFamily)) families.push(projectorFamily);
  const fileType = fileTypeName(ggufNumber(header, "general.file_type"));
  return {
    model_format: "gguf",
    model_family: family,
    model_families: families,
    model_type: formatParameterCount(ggufParameterCount(header)),
    file_type: fileType ?? "unknown",
    architecture: process.arch === "x64" ? "amd64" : process.arch,
    os: process.platform,
  };
}
