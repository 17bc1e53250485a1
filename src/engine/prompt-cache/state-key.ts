// The identity a saved state belongs to: the model file, and everything else that changes what a state
// holds or whether llama.cpp can restore it (the projector, LoRA adapters, the KV cache's type, flash
// attention, which lays V out another way, and the llama.cpp release that wrote it). A state found on
// disk is used only under the same identity; each identity has a folder of its own.
//
// A file's identity is its size and a digest of its first and last MiB (a GGUF's header and tensor
// table, and the end of its weights), so that a copy or another name of the same file (a store blob, a
// path) finds the same states while reading only 2 MiB, and an edited or replaced file does not.
import { createHash } from "node:crypto";
import { open, stat } from "node:fs/promises";
import { llamaCppRelease } from "../../version.ts";

const EDGE_BYTES = 1048576;

export interface StateKeyParts {
  modelPath: string;
  projectorPath?: string;
  loraAdapters?: string[];
  kvCacheType?: string;
  flashAttention?: string;
}

/** A hex digest naming the identity; the first 16 characters name its folder. */
export async function stateKey(parts: StateKeyParts): Promise<string> {
  const hash = createHash("sha256");
  hash.update(`llamux prompt state\0llama.cpp ${llamaCppRelease}\0`);
  hash.update(`model ${await fileIdentity(parts.modelPath)}\0`);
  hash.update(`projector ${parts.projectorPath ? await fileIdentity(parts.projectorPath) : "none"}\0`);
  for (const adapter of parts.loraAdapters ?? []) hash.update(`adapter ${await fileIdentity(adapter)}\0`);
  hash.update(`kv ${parts.kvCacheType ?? "f16"}\0flash-attention ${parts.flashAttention ?? "auto"}\0`);
  return hash.digest("hex");
}

async function fileIdentity(path: string): Promise<string> {
  const { size } = await stat(path);
  const hash = createHash("sha256");
  const file = await open(path, "r");
  try {
    const head = new Uint8Array(Math.min(EDGE_BYTES, size));
    await file.read(head, 0, head.length, 0);
    hash.update(head);
    const tailStart = Math.max(head.length, size - EDGE_BYTES);
    const tail = new Uint8Array(size - tailStart);
    await file.read(tail, 0, tail.length, tailStart);
    hash.update(tail);
  } finally {
    await file.close();
  }
  return `${size}:${hash.digest("hex")}`;
}
