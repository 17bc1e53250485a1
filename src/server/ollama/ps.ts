// GET /api/ps: the loaded models, the one with the most time left first. `expires_at` is when an idle
// model unloads (year 2318 for "forever", as Ollama writes it), `context_length` the context per
// sequence the engine was given.
import type { Context } from "hono";
import type { ServerDeps } from "../deps.ts";
import { fileDigest } from "../model-listing.ts";
import type { LoadedModel } from "../model-service.ts";
import { modelDetails } from "./details.ts";

/** Ollama's "forever": now plus the largest Go duration (2^63-1 ns). */
const FOREVER_MS = 9_223_372_036_854;

/** Bytes of the model's weights on a GPU: none unless layers were offloaded. */
function vramBytes(loaded: LoadedModel): number {
  const { info, options } = loaded.engine;
  if (info.compute.startsWith("running on CPU") || !options.gpuLayers) return 0;
  const layers = Number(info.metadata[`${info.architecture}.block_count`] ?? 0);
  if (options.gpuLayers < 0 || layers === 0) return info.sizeBytes;
  return Math.round(info.sizeBytes * Math.min(1, options.gpuLayers / layers));
}

export function runningModels(deps: ServerDeps) {
  return function runningModelsHandler(c: Context) {
    const now = Date.now();
    const loaded = deps.models.loaded().sort((a, b) => b.expiresAt - a.expiresAt);
    return c.json({
      models: loaded.map((entry) => ({
        name: entry.model.id,
        model: entry.model.id,
        size: entry.engine.info.sizeBytes,
        // a stored model is known by its manifest digest, as `ollama ps` shows its ID
        digest: entry.model.stored?.manifestDigest ?? fileDigest(entry.model.path),
        details: modelDetails(entry.engine.info),
        expires_at: new Date(Number.isFinite(entry.expiresAt) ? entry.expiresAt : now + FOREVER_MS).toISOString(),
        size_vram: vramBytes(entry),
        context_length: entry.engine.info.contextPerSequence,
      })),
    });
  };
}
