// After a pull has downloaded a GGUF layer: check that it is a complete GGUF file, and put an
// Ollama-named LFM2 model into the store in the form llama.cpp loads (a new blob; the manifest then
// names that one).
import { rm } from "node:fs/promises";
import { tempPathIn } from "./atomic-file.ts";
import { type GgufHeader, GgufReadError, readGgufHeaderSync } from "./gguf.ts";
import { lfm2RepairsNeeded, repairLfm2File } from "./lfm2-repair.ts";
import { digestHex, type ManifestLayer } from "./manifest.ts";
import type { ModelStore } from "./model-store.ts";
import type { ProgressHandler } from "./pull-progress.ts";

export interface CheckedLayer {
  layer: ManifestLayer;
  header: GgufHeader;
  /** what the LFM2 repair changed; empty when the file was stored as it came */
  repairs: string[];
}

/** Removes a blob unless a manifest references it. */
export async function discardBlob(store: ModelStore, digest: string): Promise<void> {
  if (!store.referencedDigests().has(digestHex(digest))) await rm(store.blobPath(digest), { force: true });
}

/** Reads the layer's GGUF header; a file that is not a complete GGUF is discarded with the reader's reason. */
export async function checkGgufLayer(store: ModelStore, layer: ManifestLayer, label: string): Promise<GgufHeader> {
  try {
    return readGgufHeaderSync(store.blobPath(layer.digest), { maxArrayLength: 0 });
  } catch (error) {
    if (!(error instanceof GgufReadError)) throw error;
    await discardBlob(store, layer.digest);
    throw new Error(`${label} is not a usable GGUF file: ${error.reason}`, { cause: error });
  }
}

/** Checks a model layer and repairs it when it is an Ollama-named LFM2 file. */
export async function checkModelLayer(store: ModelStore, layer: ManifestLayer, label: string, onProgress?: ProgressHandler): Promise<CheckedLayer> {
  const header = await checkGgufLayer(store, layer, label);
  const repairs = lfm2RepairsNeeded(header);
  if (repairs.length === 0) return { layer, header, repairs };
  onProgress?.({ status: "repairing model for llama.cpp" });
  const temp = tempPathIn(store.blobsDir);
  try {
    await repairLfm2File(store.blobPath(layer.digest), temp);
    const blob = await store.importBlob(temp, { move: true });
    await discardBlob(store, layer.digest);
    const repaired = { ...layer, digest: blob.digest, size: blob.size };
    return { layer: repaired, header: readGgufHeaderSync(store.blobPath(blob.digest), { maxArrayLength: 0 }), repairs };
  } finally {
    await rm(temp, { force: true });
  }
}
