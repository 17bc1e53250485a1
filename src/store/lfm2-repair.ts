// LFM2 GGUFs published for Ollama name the final norm `output_norm.weight`, where llama.cpp's lfm2 and
// lfm2moe loaders look for `token_embd_norm.weight` (LLM_TENSOR_OUTPUT_NORM_LFM2 in llama-arch.cpp), and
// some carry a feed_forward_length that does not match their FFN tensors. Such a file is rewritten
// with the tensor renamed and the header fixed; the tensor data is copied byte for byte.
import { closeSync, fsyncSync, mkdirSync, openSync, readSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { renameDurably, tempPathIn } from "./atomic-file.ts";
import { describeWriteError } from "./blob-writer.ts";
import { type GgufHeader, type GgufKv, type GgufTensorInfo, ggufKv, ggufNumber, ggufString, readGgufHeaderSync, writeGguf } from "./gguf.ts";

const LFM2_ARCHITECTURES = new Set(["lfm2", "lfm2moe"]);
const OLLAMA_NORM = "output_norm.weight";
const LLAMA_CPP_NORM = "token_embd_norm.weight";
const COPY_CHUNK = 8 << 20;

/** What a repair would change, or an empty list when the file loads as it is. */
export function lfm2RepairsNeeded(header: GgufHeader): string[] {
  const architecture = ggufString(header, "general.architecture") ?? "";
  if (!LFM2_ARCHITECTURES.has(architecture)) return [];
  const names = new Set(header.tensors.map((t) => t.name));
  const repairs: string[] = [];
  if (names.has(OLLAMA_NORM) && !names.has(LLAMA_CPP_NORM)) repairs.push(`rename ${OLLAMA_NORM} to ${LLAMA_CPP_NORM}`);
  const gate = header.tensors.find((t) => t.name === "blk.0.ffn_gate.weight");
  const declared = ggufNumber(header, `${architecture}.feed_forward_length`);
  if (gate && gate.shape[1] !== undefined && declared !== undefined && declared !== gate.shape[1]) {
    repairs.push(`set ${architecture}.feed_forward_length ${declared} to ${gate.shape[1]}`);
  }
  if (repairs.length > 0 && !header.metadata.has("tokenizer.ggml.pre")) repairs.push("set tokenizer.ggml.pre to lfm2");
  return repairs;
}

function repairedMetadata(header: GgufHeader): Array<[string, GgufKv]> {
  const architecture = ggufString(header, "general.architecture")!;
  const metadata = new Map(header.metadata);
  const gate = header.tensors.find((t) => t.name === "blk.0.ffn_gate.weight");
  const key = `${architecture}.feed_forward_length`;
  if (gate?.shape[1] !== undefined && metadata.has(key)) metadata.set(key, ggufKv.uint32(gate.shape[1]));
  if (!metadata.has("tokenizer.ggml.pre")) metadata.set("tokenizer.ggml.pre", ggufKv.string("lfm2"));
  return [...metadata];
}

function copyTensor(fd: number, tensor: GgufTensorInfo) {
  return (sink: { write(chunk: ArrayBufferView): void }) => {
    const buffer = new Uint8Array(Math.min(COPY_CHUNK, Math.max(tensor.byteSize, 1)));
    let done = 0;
    while (done < tensor.byteSize) {
      const got = readSync(fd, buffer, 0, Math.min(buffer.byteLength, tensor.byteSize - done), tensor.fileOffset + done);
      if (got <= 0) throw new Error(`tensor "${tensor.name}" ends early`);
      sink.write(buffer.subarray(0, got));
      done += got;
    }
  };
}

/** Writes a repaired copy of `source` to `destination`, atomically; the source is only read. Returns the repairs made. */
export async function repairLfm2File(source: string, destination: string): Promise<string[]> {
  const header = readGgufHeaderSync(source); // every array in full: the copy rewrites them
  const repairs = lfm2RepairsNeeded(header);
  const dir = dirname(destination);
  mkdirSync(dir, { recursive: true });
  const temp = tempPathIn(dir);
  const fd = openSync(source, "r");
  try {
    // tensors in file order, so the copy reads the source front to back
    const tensors = [...header.tensors].sort((a, b) => a.offset - b.offset).map((tensor) => ({
      name: tensor.name === OLLAMA_NORM ? LLAMA_CPP_NORM : tensor.name,
      shape: tensor.shape,
      type: tensor.type,
      write: copyTensor(fd, tensor),
    }));
    await writeGguf(temp, { metadata: repairedMetadata(header), tensors });
    const written = openSync(temp, "r");
    try {
      fsyncSync(written);
    } finally {
      closeSync(written);
    }
    await renameDurably(temp, destination);
    return repairs;
  } catch (error) {
    await rm(temp, { force: true });
    throw describeWriteError(error, `repaired copy of "${source}"`);
  } finally {
    closeSync(fd);
  }
}
