// The models a server offers and how a request's `model` field finds one: a model named on `llamux serve`
// (by its served name or file path), a LoRA adapter served on it (--enable-lora), a GGUF path the request
// names directly, or a name in the model store (`[host/][namespace/]model[:tag]`, any case), which brings
// its Modelfile layers along.
import { existsSync, statSync } from "node:fs";
import { freemem } from "node:os";
import { basename } from "node:path";
import type { InstancePolicy, KeepAlivePolicy, LoadedEngine, ModelManager } from "../engine/model-manager.ts";
import type { EngineProcess } from "../engine/engine-process.ts";
import type { EngineOptions } from "../engine/types.ts";
import type { ModelStore, ResolvedModel, StoredModel } from "../store/model-store.ts";
import { ApiError, badRequest, notFound } from "./api-error.ts";
import { GgufReadError } from "../store/gguf-reader.ts";
import { kindAt } from "../store/regular-file.ts";
import { siblingProjector } from "../vision/projector-file.ts";
import { logger } from "../log.ts";
import { contextCeiling, grownContext, grownContextSize, type GrownContext } from "./context-growth.ts";
import type { ContextCeiling } from "../generation/chat-spec.ts";
import { checkModelAllowed } from "../keys/key-request.ts";
import type { LoraRegistry } from "./lora-registry.ts";
import { ServedAdapters } from "./served-adapters.ts";
import { ModelFacts } from "./model-facts.ts";
import { contextOptions, contextWithinTraining, requestedLoadOptions, type LoadInputs, type ServerLoadSettings } from "./model-load-options.ts";

const log = logger("models");

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
  /**
   * Set for a LoRA adapter served per request (--lora-modules, /v1/load_lora_adapter): the rest of the
   * model is its parent's, whose engine runs its requests with the adapter.
   */
  adapter?: { name: string; path: string; parent: string };
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

export interface ModelServiceOptions extends ServerLoadSettings {
  /** Idle time before a model loaded on demand is unloaded. Default: 5 minutes. */
  idleUnloadMs?: number;
  /** Whether growContext may reload a model with more context (not when --max-model-len set a limit). */
  growContext?: boolean;
  /** The model store requests may name models from (none: served models and paths only). */
  store?: ModelStore;
  /**
   * "one": a model has one engine, reloaded when a request asks for other load options (Ollama's rule);
   * default "per-options": one engine per distinct load options.
   */
  instances?: InstancePolicy;
  /** The message of a 404 for a model name that finds nothing. Default: vLLM's words. */
  modelNotFound?: (name: string) => string;
  /** LoRA adapters per request on the served models (--enable-lora): one registry for every listener. */
  lora?: LoraRegistry;
}

/** vLLM's words for a model it does not serve. */
export const vllmModelNotFound = (name: string) => `The model \`${name}\` does not exist.`;

/** A model given by path gets the projector lying next to it. */
function withProjector(model: ServedModel): ServedModel {
  if (model.projectorPath) return model;
  const projectorPath = siblingProjector(model.path);
  return projectorPath ? { ...model, projectorPath } : model;
}

export class ModelService {
  private readonly served: ServedModel[];
  /** The served models' LoRA adapters, when --enable-lora is on. */
  readonly adapters: ServedAdapters | undefined;

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
    this.adapters = options.lora ? new ServedAdapters(options.lora, () => this.served) : undefined;
  }

  list(): ServedModel[] {
    return this.served;
  }

  /** The LoRA adapters requests may name, each as a model whose `parent` is a served one (vLLM's /v1/models). */
  listAdapters(): ServedModel[] {
    return this.adapters?.models() ?? [];
  }

  /** vLLM's /v1/load_lora_adapter on this service's served models. */
  loadAdapter(request: Parameters<ServedAdapters["load"]>[1]): Promise<string> {
    return this.loraAdapters().load(this.adapterHost(), request);
  }

  /** vLLM's /v1/unload_lora_adapter. */
  unloadAdapter(request: Parameters<ServedAdapters["unload"]>[1]): Promise<string> {
    return this.loraAdapters().unload(this.adapterHost(), request);
  }

  private loraAdapters(): ServedAdapters {
    if (!this.adapters) throw badRequest("LoRA is not enabled. Use --enable-lora to enable LoRA.");
    return this.adapters;
  }

  private adapterHost() {
    return { engine: (model: ServedModel) => this.engine(model), loadedEngines: (model: ServedModel) => this.loadedOf(model).map((l) => l.engine) };
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
    const adapter = this.adapters?.find(name);
    if (adapter) return adapter;
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
      this.facts.of(model);
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

  /** What the models' files say (each header read once). */
  private readonly facts = new ModelFacts();

  /** Whether the model embeds rather than generates. */
  embeds(model: ServedModel): boolean {
    return this.facts.embeds(model);
  }

  /** Whether the model is a reranker: it scores query+document pairs. */
  reranks(model: ServedModel): boolean {
    return this.facts.reranks(model);
  }

  /** Whether requests to the model may carry images. */
  hasVision(model: ServedModel): boolean {
    return this.facts.hasVision(model);
  }

  /** Whether requests to the model may carry audio (not a speech projector's reference voices). */
  hasAudio(model: ServedModel): boolean {
    return this.facts.hasAudio(model);
  }

  /** Whether the model speaks (/v1/audio/speech). */
  speaks(model: ServedModel): boolean {
    return this.facts.speaks(model);
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
    const size = grownContextSize(neededTokens, this.facts.of(model).trainedContext);
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
      trainedContext: this.facts.of(model).trainedContext,
      grows: (this.options.growContext ?? false) && !this.embeds(model),
      loaded: this.loadedOf(model).map(({ engine: { info } }) => info),
      configured: contextOptions(this.contextInputs(model)).contextPerSequence,
      freeBytes: freemem(),
    });
  }

  /** The options the model is loaded with: the server's settings, its file, its grown context and `overrides`. */
  engineOptions(model: ServedModel, overrides: Partial<EngineOptions> = {}): EngineOptions {
    const options = this.requestedEngineOptions(model, overrides);
    const trained = this.facts.of(model).trainedContext;
    const context = contextWithinTraining(options.contextPerSequence, trained);
    if (context === options.contextPerSequence) return options;
    this.sayClamped(model, options.contextPerSequence!, trained!);
    return { ...options, contextPerSequence: context };
  }

  private requestedEngineOptions(model: ServedModel, overrides: Partial<EngineOptions>): EngineOptions {
    return requestedLoadOptions(model, this.loadInputs(model), overrides);
  }

  private loadInputs(model: ServedModel): LoadInputs {
    return {
      ...this.contextInputs(model),
      adapters: model.pinned && this.adapters ? this.adapters.engineOptions(this.parentOf(model)) : undefined,
    };
  }

  /** What decides the model's context sizes (its adapters do not). */
  private contextInputs(model: ServedModel): Omit<LoadInputs, "adapters"> {
    return { settings: this.options, facts: this.facts.of(model), grown: this.grown.get(model.path) };
  }

  /** Logs a context clamped to the trained one once per model file and asked-for size, not on every request. */
  private sayClamped(model: ServedModel, requested: number, trained: number): void {
    const said = `${model.path}\u0000${requested}`;
    if (this.clampsSaid.has(said)) return;
    if (this.clampsSaid.size >= 256) this.clampsSaid.clear(); // bounded, whatever sizes requests send
    this.clampsSaid.add(said);
    log.warn(`context of ${requested} tokens asked for "${model.id}" is more than it was trained for: using ${trained}`);
  }

  /** Clamps already logged. */
  private readonly clampsSaid = new Set<string>();

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
    const parent = this.parentOf(model);
    modelOfEngine.set(engine, parent);
    if (model.pinned && this.adapters) await this.adapters.sync(engine, parent, model);
    return engine;
  }

  /** The served model a LoRA adapter's model runs on; any other model is its own. */
  private parentOf(model: ServedModel): ServedModel {
    return model.adapter ? this.served.find((m) => m.id === model.adapter!.parent) ?? model : model;
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
