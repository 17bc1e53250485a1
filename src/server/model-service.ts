// The models a server offers and how a request's `model` field finds one: a model named on `llamux serve`
// (by its served name or file path), a GGUF path the request names directly, or a name in the model
// store (`[host/][namespace/]model[:tag]`, any case), which brings its Modelfile layers along.
import { existsSync, statSync } from "node:fs";
import { freemem } from "node:os";
import { basename } from "node:path";
import type { InstancePolicy, KeepAlivePolicy, LoadedEngine, ModelManager } from "../engine/model-manager.ts";
import type { EngineProcess } from "../engine/engine-process.ts";
import type { EngineOptions } from "../engine/types.ts";
import { readGgufHeaderSync, ggufNumber, ggufString, ggufArchKey } from "../store/gguf.ts";
import type { ModelStore, ResolvedModel, StoredModel } from "../store/model-store.ts";
import { ApiError, badRequest, notFound } from "./api-error.ts";
import { GgufReadError } from "../store/gguf-reader.ts";
import { kindAt } from "../store/regular-file.ts";
import { projectorModalities, siblingProjector } from "../vision/projector-file.ts";
import { logger } from "../log.ts";
import { contextCeiling, grownContext, grownContextSize, type GrownContext } from "./context-growth.ts";
import type { ContextCeiling } from "../generation/chat-spec.ts";
import { checkModelAllowed } from "../keys/key-request.ts";
import type { KvEventsConfig } from "../engine/kv-events/kv-events-config.ts";

const log = logger("models");

/** Architectures that only embed (no generation); others embed only when their file says how to pool. */
const embeddingArchitectures = new Set(["bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert", "neo-bert", "t5encoder"]);

/** What a model's header (not its weights) says about how it may be loaded. */
interface HeaderFacts {
  /** An embedding model rather than a generative one. */
  embeds: boolean;
  /** The context it was trained for, when the file says. */
  trainedContext: number | undefined;
}

function headerFacts(path: string): HeaderFacts {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  const architecture = ggufString(header, "general.architecture") ?? "";
  const trained = ggufNumber(header, ggufArchKey(header, "context_length"));
  return {
    embeds: embeddingArchitectures.has(architecture) || header.metadata.has(ggufArchKey(header, "pooling_type")),
    trainedContext: trained !== undefined && trained > 0 ? trained : undefined,
  };
}

/** Reads the file's header (not its weights) to tell embedding models from generative ones. */
export function isEmbeddingModel(path: string): boolean {
  return headerFacts(path).embeds;
}

/** llama_pooling_type's rank: the pooled output is a classifier head's score (llama.cpp's --pooling rank). */
const RANK_POOLING = 4;

/**
 * A reranker (cross-encoder): an embedding model whose file declares rank pooling, or whose classifier
 * head (`cls.output.*`) is stored without a pooling type (llama.cpp then needs --pooling rank; llamux
 * treats such files as rerankers too).
 */
export function isRerankModel(path: string): boolean {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  const pooling = ggufNumber(header, ggufArchKey(header, "pooling_type"));
  if (pooling !== undefined) return pooling === RANK_POOLING;
  return isEmbeddingModel(path) && header.tensors.some((t) => t.name === "cls.output.weight");
}

/** Query+document pairs a reranker decodes together, one sequence each, in one llama_decode. */
export const RERANK_SEQUENCES = 8;

export interface ServedModel {
  /** The name clients use: --served-model-name, else the path given on the command line. */
  id: string;
  path: string;
  /** Unix seconds, for model listings. */
  created: number;
  /** Named on `llamux serve`: never unloaded for idleness. */
  pinned: boolean;
  /**
   * Set for a model from the store: its template, system prompt, parameters (defaults under a request's
   * options), seed messages, projector and adapters, which routes apply.
   */
  stored?: ResolvedModel;
  /** The vision projector loaded with the model (a sibling mmproj-*.gguf, or the store's projector layer). */
  projectorPath?: string;
}

/** How long a model a request loads or uses may stay idle, and how that combines with its current keep-alive. */
export interface KeepAliveRequest {
  ms: number;
  policy: KeepAlivePolicy;
}

/** A loaded engine and the model it was loaded for. */
export interface LoadedModel extends LoadedEngine {
  model: ServedModel;
}

// Which model each engine was loaded for, shared by the services of every listener (one manager).
const modelOfEngine = new WeakMap<EngineProcess, ServedModel>();

export interface ModelServiceOptions {
  /** Parallel sequences per model. */
  parallel: number;
  /** Idle time before a model loaded on demand is unloaded. Default: 5 minutes. */
  idleUnloadMs?: number;
  /**
   * Context per sequence; undefined means the model's trained context within memory (vLLM's
   * max_model_len default), one pool of that size shared by the sequences.
   */
  contextPerSequence: number | undefined;
  /** Whether growContext may reload a model with more context (not when --max-model-len set a limit). */
  growContext?: boolean;
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
  kvEvents?: KvEventsConfig;
  /** The prompt cache's disk tier, shared by every model (--cache-disk, --cache-disk-mib); unset: off. */
  cacheDisk?: { dir: string; limitMiB: number };
  /** The model store requests may name models from (none: served models and paths only). */
  store?: ModelStore;
  /** Speculative decoding for the models named on `serve` (--model-draft, --speculative-config). */
  speculative?: EngineOptions["speculative"];
  /**
   * "one": a model has one engine, reloaded when a request asks for other load options (Ollama's rule);
   * default "per-options": one engine per distinct load options.
   */
  instances?: InstancePolicy;
  /** The message of a 404 for a model name that finds nothing. Default: vLLM's words. */
  modelNotFound?: (name: string) => string;
}

/** vLLM's words for a model it does not serve. */
export const vllmModelNotFound = (name: string) => `The model \`${name}\` does not exist.`;

/** A model given by path gets the projector lying next to it. */
function withProjector(model: ServedModel): ServedModel {
  if (model.projectorPath) return model;
  const projectorPath = siblingProjector(model.path);
  return projectorPath ? { ...model, projectorPath } : model;
}

/** A served model speculates as `serve` says; a stored one with a DRAFT layer uses that draft model. */
function speculativeOf(model: ServedModel, served: EngineOptions["speculative"]): Pick<EngineOptions, "speculative"> {
  if (model.pinned && served) return { speculative: served };
  if (model.stored?.draftPath) return { speculative: { method: "draft", draftModelPath: model.stored.draftPath } };
  return {};
}

export class ModelService {
  private readonly served: ServedModel[];

  constructor(
    protected readonly manager: ModelManager, served: Array<{ path: string; name?: string; projectorPath?: string }>, private readonly options: ModelServiceOptions,
  ) {
    this.served = served.map(({ path, name, projectorPath }) => withProjector({
      id: name ?? path,
      path,
      created: Math.floor((existsSync(path) ? statSync(path).mtimeMs : Date.now()) / 1000),
      pinned: true,
      ...(projectorPath ? { projectorPath } : {}),
    }));
  }

  list(): ServedModel[] {
    return this.served;
  }

  /** The model a request names; an empty name means the first served model. */
  resolve(name: string | undefined): ServedModel {
    if (!name) {
      const first = this.served[0];
      if (!first) throw notFound("No model is being served; name one in the request", "model");
      return first;
    }
    const found = this.findNamed(name, "model");
    if (found) return found;
    throw notFound((this.options.modelNotFound ?? vllmModelNotFound)(name), "model");
  }

  /**
   * A request's draft model (`draft_model`): only a model the name finds, never a fallback (a model
   * drafting for itself gains nothing).
   */
  resolveDraft(name: string): ServedModel {
    const found = this.findNamed(name, "draft_model");
    if (found) return found;
    throw notFound((this.options.modelNotFound ?? vllmModelNotFound)(name), "draft_model");
  }

  /** A served model, a GGUF path, or a store name; undefined when the name finds nothing. `param` names the field in errors. */
  protected findNamed(name: string, param: string): ServedModel | undefined {
    const served = this.served.find((m) => m.id === name || m.path === name || basename(m.path) === name);
    if (served) return served;
    if (name.endsWith(".gguf")) {
      const byPath = this.modelAtPath(name, param);
      if (byPath) return byPath;
    }
    return this.resolveStored(name);
  }

  /**
   * A GGUF file a request names by path, undefined when nothing is there. What is there must be a
   * regular file (a FIFO would block whatever opened it, on the thread that serves every request) whose
   * GGUF header reads: anything else is the request's fault, a 400.
   */
  private modelAtPath(path: string, param: string): ServedModel | undefined {
    const at = kindAt(path);
    if (!at) return undefined;
    if (!at.regular) throw badRequest(`Cannot load model "${path}": it is ${at.kind}, not a GGUF file`, param);
    const model = withProjector({ id: path, path, created: Math.floor(statSync(path).mtimeMs / 1000), pinned: false });
    try {
      this.facts(model);
    } catch (error) {
      if (error instanceof GgufReadError) throw badRequest(`Cannot load model "${path}": ${error.reason === "bad magic" ? "file is not GGUF" : error.reason}`, param);
      throw error;
    }
    return model;
  }

  /** The model store, when this server has one (for /api/tags, /api/pull and the like). */
  get store(): ModelStore | undefined {
    return this.options.store;
  }

  /** Every model in the store, newest first (empty without a store). */
  listStored(): StoredModel[] {
    return this.options.store?.list() ?? [];
  }

  /** A store name as a served model, read fresh from its manifest (it may have been re-created); undefined when absent. */
  resolveStored(name: string): ServedModel | undefined {
    let resolved: ResolvedModel | undefined;
    try {
      resolved = this.options.store?.resolve(name);
    } catch (error) {
      // a manifest whose blobs are missing or unreadable: the store is damaged, not the request
      throw new ApiError(500, (error as Error).message, { cause: error });
    }
    if (!resolved) return undefined;
    return {
      id: resolved.name, path: resolved.modelPath, created: Math.floor(resolved.modifiedAt.getTime() / 1000), pinned: false, stored: resolved,
      ...(resolved.projectorPath ? { projectorPath: resolved.projectorPath } : {}),
    };
  }

  /** Whether an engine of the model is loaded now. */
  isLoaded(model: ServedModel): boolean {
    return this.loadedOf(model).length > 0;
  }

  /**
   * The loaded engines that serve the model: same weights, projector and adapters. Two stored models may
   * share weights (one with a projector or an ADAPTER): each has engines of its own.
   */
  loadedOf(model: ServedModel): LoadedModel[] {
    const sameFile = this.loaded().filter(({ engine: { options } }) => options.modelPath === model.path);
    // the engine options below read the file's header: not needed (nor possible, once it is deleted) when nothing uses the file
    if (sameFile.length === 0) return [];
    const wanted = this.requestedEngineOptions(model, {});
    const adapters = (options: EngineOptions) => JSON.stringify(options.loraAdapters ?? []);
    return sameFile.filter(({ engine: { options } }) => options.projectorPath === wanted.projectorPath && adapters(options) === adapters(wanted));
  }

  private readonly headers = new Map<string, HeaderFacts>();

  /** What the model file's header says (cached per file). */
  private facts(model: ServedModel): HeaderFacts {
    let facts = this.headers.get(model.path);
    if (facts === undefined) {
      facts = headerFacts(model.path);
      this.headers.set(model.path, facts);
    }
    return facts;
  }

  /** Whether the model embeds rather than generates (cached per file). */
  embeds(model: ServedModel): boolean {
    return this.facts(model).embeds;
  }

  /**
   * A context asked for (num_ctx, context_length, --ctx-size) within what the model was trained for:
   * more is clamped to that, with a log line, as Ollama does. The engine further caps it by memory.
   */
  private contextWithinTraining(model: ServedModel, requested: number | undefined): number | undefined {
    const trained = this.facts(model).trainedContext;
    if (requested === undefined || trained === undefined || requested <= trained) return requested;
    const said = `${model.path}\u0000${requested}`;
    if (!this.clampsSaid.has(said)) {
      if (this.clampsSaid.size >= 256) this.clampsSaid.clear(); // bounded, whatever sizes requests send
      this.clampsSaid.add(said);
      log.warn(`context of ${requested} tokens asked for "${model.id}" is more than it was trained for: using ${trained}`);
    }
    return trained;
  }

  /** Clamps already logged (once per model file and asked-for size, not on every request). */
  private readonly clampsSaid = new Set<string>();

  /** Whether requests to the model may carry images. */
  private readonly rerankModels = new Map<string, boolean>();

  /** Whether the model is a reranker: it scores query+document pairs (cached per file). */
  reranks(model: ServedModel): boolean {
    let reranks = this.rerankModels.get(model.path);
    if (reranks === undefined) {
      reranks = this.embeds(model) && isRerankModel(model.path);
      this.rerankModels.set(model.path, reranks);
    }
    return reranks;
  }

  /** Whether requests to the model may carry images: its projector has a vision encoder. */
  hasVision(model: ServedModel): boolean {
    return model.projectorPath !== undefined && projectorModalities(model.projectorPath).vision;
  }

  /**
   * Whether requests to the model may carry audio: its projector has an audio encoder (mtmd_support_audio)
   * and is not a text-to-speech projector, whose audio encoder only reads reference voices.
   */
  hasAudio(model: ServedModel): boolean {
    if (model.projectorPath === undefined) return false;
    const modalities = projectorModalities(model.projectorPath);
    return modalities.audio && !modalities.speech;
  }

  /** Whether the model speaks (/v1/audio/speech): its projector generates audio. */
  speaks(model: ServedModel): boolean {
    return model.projectorPath !== undefined && projectorModalities(model.projectorPath).speech;
  }

  /** Context sizes growContext chose, per model file: later loads of the model keep them. */
  private readonly grown = new Map<string, GrownContext>();

  /**
   * Makes the model's context hold a request of `neededTokens`: when its loaded instance has less, it is
   * reloaded with the next power of two (within its trained context and memory), once the requests
   * running on it have ended. True when the model now has room for the request; false when growing is
   * off (--max-model-len on profile b), or the trained context or the memory is too small.
   */
  async growContext(model: ServedModel, neededTokens: number): Promise<boolean> {
    if (this.embeds(model)) return false;
    const loaded = this.loadedOf(model);
    const current = Math.max(0, ...loaded.map((l) => l.engine.info.contextPerSequence));
    if (loaded.length > 0 && current >= neededTokens) return true;
    if (!this.options.growContext) return false;
    const size = grownContextSize(neededTokens, this.facts(model).trainedContext);
    if (size === undefined) return false;
    const sizes = grownContext(size, Math.max(0, ...loaded.map((l) => l.engine.info.sharedContext)), this.options.parallel);
    log.info(`growing the context of "${model.id}" from ${current || "its default"} to ${size} tokens (${sizes.sharedContext} shared by its sequences) for a request of ${neededTokens} tokens: reloading it once its running requests end`);
    this.grown.set(model.path, sizes);
    await Promise.all(loaded.map((l) => this.manager.retire(l.engine)));
    const engine = await this.engine(model);
    return engine.info.contextPerSequence >= neededTokens;
  }

  /** The most context a request to the model can get here (what growContext can reach), and what bounds it. */
  contextCeiling(model: ServedModel): ContextCeiling {
    return contextCeiling({
      trainedContext: this.facts(model).trainedContext,
      grows: (this.options.growContext ?? false) && !this.embeds(model),
      loaded: this.loadedOf(model).map(({ engine: { info } }) => info),
      configured: this.contextOptions(model, {}).contextPerSequence,
      freeBytes: freemem(),
    });
  }

  engineOptions(model: ServedModel, overrides: Partial<EngineOptions> = {}): EngineOptions {
    const options = this.requestedEngineOptions(model, overrides);
    const context = this.contextWithinTraining(model, options.contextPerSequence);
    return context === options.contextPerSequence ? options : { ...options, contextPerSequence: context };
  }

  private requestedEngineOptions(model: ServedModel, overrides: Partial<EngineOptions>): EngineOptions {
    // Embedding models take one input at a time and their trained context (often 512 positions).
    if (this.embeds(model)) {
      // A reranker decodes several pairs at once, one sequence each.
      const rank = this.reranks(model);
      return { modelPath: model.path, embeddings: true, parallel: rank ? RERANK_SEQUENCES : 1, ...(rank ? { rank } : {}), ...(this.options.threads !== undefined ? { threads: this.options.threads } : {}), ...overrides };
    }
    return {
      modelPath: model.path,
      ...(model.projectorPath ? { projectorPath: model.projectorPath } : {}),
      parallel: this.options.parallel,
      ...this.contextOptions(model, overrides),
      ...(this.options.threads !== undefined ? { threads: this.options.threads } : {}),
      ...(this.options.gpuLayers !== undefined ? { gpuLayers: this.options.gpuLayers } : {}),
      ...(this.options.gpuMemoryFraction !== undefined ? { gpuMemoryFraction: this.options.gpuMemoryFraction } : {}),
      ...(this.options.rpcServers?.length ? { rpcServers: this.options.rpcServers } : {}),
      ...(this.options.queueLimit !== undefined ? { queueLimit: this.options.queueLimit } : {}),
      ...(this.options.chatTemplate !== undefined ? { chatTemplate: this.options.chatTemplate } : {}),
      ...(this.options.flashAttention !== undefined ? { flashAttention: this.options.flashAttention } : {}),
      ...(this.options.kvCacheType !== undefined ? { kvCacheType: this.options.kvCacheType } : {}),
      ...(this.options.cacheRamMiB !== undefined ? { cacheRamMiB: this.options.cacheRamMiB } : {}),
      ...(this.options.cacheDisk ? { cacheDisk: this.options.cacheDisk } : {}),
      ...(this.options.kvEvents ? { kvEvents: this.options.kvEvents } : {}),
      // a store model's ADAPTER layers (another engine than the bare model's: the key includes them)
      ...(model.stored?.adapterPaths.length ? { loraAdapters: model.stored.adapterPaths } : {}),
      ...speculativeOf(model, this.options.speculative),
      ...overrides,
    };
  }

  /**
   * The context sizes a load gets: a grown model's, else the server's context per sequence, else the
   * trained context as one pool the sequences share (vLLM's default). A request's own size (num_ctx)
   * wins over the shared pool's size too.
   */
  private contextOptions(model: ServedModel, overrides: Partial<EngineOptions>): Partial<EngineOptions> {
    if (overrides.contextPerSequence !== undefined) return {};
    const grown = this.grown.get(model.path);
    if (grown) return grown;
    if (this.options.contextPerSequence !== undefined) return { contextPerSequence: this.options.contextPerSequence };
    const trained = this.facts(model).trainedContext;
    return trained !== undefined ? { contextPerSequence: trained, sharedContext: trained } : {};
  }

  /** How long a model may stay idle when the request says nothing: forever if named on `serve`. */
  defaultKeepAliveMs(model: ServedModel): number {
    return model.pinned ? Infinity : this.options.idleUnloadMs ?? 5 * 60_000;
  }

  /** The model's engine, loaded when it is not; a key whose models list leaves the model out gets a 403. */
  async engine(model: ServedModel, overrides: Partial<EngineOptions> = {}, keepAlive?: KeepAliveRequest): Promise<EngineProcess> {
    checkModelAllowed(model.id);
    const engine = await this.manager.engine(
      this.engineOptions(model, overrides), keepAlive?.ms ?? this.defaultKeepAliveMs(model), keepAlive?.policy ?? "longest", this.options.instances,
    );
    modelOfEngine.set(engine, model);
    return engine;
  }

  /** Every loaded engine, with the model it serves (engines loaded by path alone get a model for their path). */
  loaded(): LoadedModel[] {
    return this.manager.loadedEngines().map((loaded) => {
      const path = loaded.engine.options.modelPath;
      const model = modelOfEngine.get(loaded.engine) ?? { id: path, path, created: Math.floor(Date.now() / 1000), pinned: false };
      return { ...loaded, model };
    });
  }

  /** Unloads every engine of the model (each once its requests end); resolves when the idle ones have stopped. */
  async unload(model: ServedModel): Promise<void> {
    await this.unloadEngines(this.loadedOf(model));
  }

  /** Unloads these engines (found with loadedOf while the model's files were there to read). */
  async unloadEngines(engines: LoadedModel[]): Promise<void> {
    await Promise.all(engines.map((loaded) => this.manager.unload(loaded.engine)));
  }
}
