// The `details` object Ollama gives a model (in /api/tags, /api/show, /api/ps), from a loaded engine's
// description of its model.
import type { ModelInfo } from "../../engine/types.ts";

/** llama_ftype numbers (llama.h) of the common quantizations. */
const fileTypes: Record<number, string> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M",
  13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 32: "BF16",
};

function parameterSize(count: number): string {
  if (count >= 1e9) return `${(count / 1e9).toFixed(1)}B`;
  if (count >= 1e6) return `${(count / 1e6).toFixed(2)}M`;
  return `${Math.round(count / 1e3)}K`;
}

export function modelDetails(info: ModelInfo) {
  const fileType = Number(info.metadata["general.file_type"]);
  return {
    parent_model: "",
    format: "gguf",
    family: info.architecture,
    families: [info.architecture],
    parameter_size: parameterSize(info.parameterCount),
    quantization_level: fileTypes[fileType] ?? "unknown",
  };
}
