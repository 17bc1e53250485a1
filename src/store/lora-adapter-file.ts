// What a LoRA adapter GGUF's header says: that it is one, the architecture it was made for, and its rank
// (the inner size of its A and B factors). Read before llama.cpp sees the file, so that a file that is no
// adapter, or an adapter for another model, is refused in words (Modelfile ADAPTER, vLLM's adapters).
import { GgufReadError, readGgufHeaderSync, ggufString, type GgufHeader } from "./gguf.ts";

export interface LoraAdapterFacts {
  architecture: string | undefined;
  /** The largest rank of its weight pairs (0 when it has none). */
  rank: number;
}

/** A file that cannot be the LoRA adapter asked for; `reason` reads after the file's name ("is not a GGUF file: …"). */
export class LoraAdapterFileError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "LoraAdapterFileError";
  }
}

/** The adapter's facts; throws LoraAdapterFileError when the file is no LoRA adapter GGUF, or one for another architecture. */
export function readLoraAdapter(path: string, modelArchitecture?: string): LoraAdapterFacts {
  let header: GgufHeader;
  try {
    header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  } catch (error) {
    throw new LoraAdapterFileError(`is not a GGUF file: ${error instanceof GgufReadError ? error.reason : "cannot read it"}`);
  }
  if (ggufString(header, "general.type") !== "adapter" || ggufString(header, "adapter.type") !== "lora") {
    throw new LoraAdapterFileError('is not a LoRA adapter: its GGUF metadata needs general.type "adapter" and adapter.type "lora"');
  }
  const architecture = ggufString(header, "general.architecture");
  if (modelArchitecture && architecture !== modelArchitecture) {
    throw new LoraAdapterFileError(`is for architecture "${architecture ?? "unknown"}", but the model is "${modelArchitecture}"`);
  }
  // lora_a is [in, rank] in ggml's order
  const rank = header.tensors.reduce((most, tensor) => (tensor.name.endsWith(".lora_a") ? Math.max(most, tensor.shape[1] ?? 0) : most), 0);
  return { architecture, rank };
}
