// How a model is loaded: the engine options it gets from the server's settings, its file's header, the
// context growContext chose for it, and a request's own load options (num_ctx and the like). Decisions
// only: the model service reads the facts, logs and runs the load.
import type { EngineOptions } from "../engine/types.ts";
import type { GrownContext } from "./context-growth.ts";
import type { HeaderFacts } from "./model-facts.ts";

/** Query+document pairs a reranker decodes together, one sequence each, in one llama_decode. */
export const RERANK_SEQUENCES = 8;

/** The server's settings that every load takes (--parallel, --threads, the caches, ...). */
export interface ServerLoadSettings {
  /** Parallel sequences per model. */
  parallel: number;
  /**
   * Context per sequence; undefined means the model's trained context within memory (vLLM's
   * max_model_len default), one pool of that size shared by the sequences.
   */
  contextPerSequence: number | undefined;
  threads?: number;
  /** Requests that may wait for a free sequence before more are refused as busy (503). */
  queueLimit?: number;
  gpuLayers?: number;
  gpuMemoryFraction?: number;
  /** RPC servers (host:port) that take part of every model's layers. */
  rpcServers?: string[];
  /** Replaces the models' own chat templates. */
  chatTemplate?: string;
  flashAttention?: EngineOptions["flashAttention"];
  kvCacheType?: EngineOptions["kvCacheType"];
  /** Host prompt cache per model in MiB (--cache-ram); 0: none. */
  cacheRamMiB?: number;
  /** KV-cache events for prefix-aware routers (vLLM's --kv-events-config); unset: none. */
  kvEvents?: EngineOptions["kvEvents"];
  /** The prompt cache's disk tier, shared by every model (--cache-disk, --cache-disk-mib); unset: off. */
  cacheDisk?: { dir: string; limitMiB: number };
  /** Speculative decoding for the models named on `serve` (--model-draft, --speculative-config). */
  speculative?: EngineOptions["speculative"];
}

/** What of a model its load depends on. */
export interface ModelToLoad {
  path: string;
  projectorPath?: string;
  /** Named on `llamux serve`. */
  pinned: boolean;
  /** A store model's Modelfile layers. */
  stored?: { adapterPaths: readonly string[]; draftPath?: string };
}

export interface LoadInputs {
  settings: ServerLoadSettings;
  facts: HeaderFacts;
  /** The sizes growContext chose for the model's file, if it grew. */
  grown: GrownContext | undefined;
  /** The served model's per-request LoRA adapters (--enable-lora); an adapter's model runs on its parent's engine. */
  adapters: Pick<EngineOptions, "lora"> | undefined;
}

/** The options a model is loaded with, before its context is held to what it was trained for. */
export function requestedLoadOptions(model: ModelToLoad, inputs: LoadInputs, overrides: Partial<EngineOptions> = {}): EngineOptions {
  const { settings } = inputs;
  // Embedding models take one input at a time and their trained context (often 512 positions).
  if (inputs.facts.embeds) {
    // A reranker decodes several pairs at once, one sequence each.
    const rank = inputs.facts.reranks;
    return { modelPath: model.path, embeddings: true, parallel: rank ? RERANK_SEQUENCES : 1, ...(rank ? { rank } : {}), ...(settings.threads !== undefined ? { threads: settings.threads } : {}), ...overrides };
  }
  return {
    modelPath: model.path,
    ...(model.projectorPath ? { projectorPath: model.projectorPath } : {}),
    parallel: settings.parallel,
    ...contextOptions(inputs, overrides),
    ...(settings.threads !== undefined ? { threads: settings.threads } : {}),
    ...(settings.gpuLayers !== undefined ? { gpuLayers: settings.gpuLayers } : {}),
    ...(settings.gpuMemoryFraction !== undefined ? { gpuMemoryFraction: settings.gpuMemoryFraction } : {}),
    ...(settings.rpcServers?.length ? { rpcServers: settings.rpcServers } : {}),
    ...(settings.queueLimit !== undefined ? { queueLimit: settings.queueLimit } : {}),
    ...(settings.chatTemplate !== undefined ? { chatTemplate: settings.chatTemplate } : {}),
    ...(settings.flashAttention !== undefined ? { flashAttention: settings.flashAttention } : {}),
    ...(settings.kvCacheType !== undefined ? { kvCacheType: settings.kvCacheType } : {}),
    ...(settings.cacheRamMiB !== undefined ? { cacheRamMiB: settings.cacheRamMiB } : {}),
    ...(settings.cacheDisk ? { cacheDisk: settings.cacheDisk } : {}),
    ...(settings.kvEvents ? { kvEvents: settings.kvEvents } : {}),
    // a store model's ADAPTER layers (another engine than the bare model's: the key includes them)
    ...(model.stored?.adapterPaths.length ? { loraAdapters: [...model.stored.adapterPaths] } : {}),
    ...(model.pinned && inputs.adapters ? inputs.adapters : {}),
    ...speculativeOf(model, settings.speculative),
    ...overrides,
  };
}

/**
 * The context sizes a load gets: a grown model's, else the server's context per sequence, else the
 * trained context as one pool the sequences share (vLLM's default). A request's own size (num_ctx)
 * wins over the shared pool's size too.
 */
export function contextOptions(inputs: Omit<LoadInputs, "adapters">, overrides: Partial<EngineOptions> = {}): Partial<EngineOptions> {
  if (overrides.contextPerSequence !== undefined) return {};
  if (inputs.grown) return inputs.grown;
  if (inputs.settings.contextPerSequence !== undefined) return { contextPerSequence: inputs.settings.contextPerSequence };
  const trained = inputs.facts.trainedContext;
  return trained !== undefined ? { contextPerSequence: trained, sharedContext: trained } : {};
}

/**
 * A context asked for (num_ctx, context_length, --ctx-size) within what the model was trained for: more
 * is clamped to that, as Ollama does. The engine further caps it by memory.
 */
export function contextWithinTraining(requested: number | undefined, trained: number | undefined): number | undefined {
  return requested === undefined || trained === undefined || requested <= trained ? requested : trained;
}

/** A served model speculates as `serve` says; a stored one with a DRAFT layer uses that draft model. */
function speculativeOf(model: ModelToLoad, served: EngineOptions["speculative"]): Pick<EngineOptions, "speculative"> {
  if (model.pinned && served) return { speculative: served };
  if (model.stored?.draftPath) return { speculative: { method: "draft", draftModelPath: model.stored.draftPath } };
  return {};
}
