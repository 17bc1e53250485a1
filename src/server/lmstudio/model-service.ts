// Profile c's model selection, as LM Studio's server picks a model for a request:
// - a name of a served or stored model uses it, loading it just in time when it is not loaded
//   (JIT loading; the request's `ttl` sets its idle time-to-live only when that request loads it);
// - any other string answers with the loaded model, the most recently used when several are loaded
//   (a generative one before an embedding one), else with the model named on `llamux serve`;
// - with nothing loaded and nothing matching, the error lists the models that can be named.
// A model loaded with other options (context length, GPU layers, through /api/v1/models/load) is used
// as it is: requests never load a second copy of a loaded model. With Auto-Evict (on by default, as in
// LM Studio; LLAMUX_JIT_AUTO_EVICT=0 turns it off) at most one model loaded just in time stays loaded;
// models named on `serve` or loaded through /api/v1/models/load are never evicted.
import type { ModelManager } from "../../engine/model-manager.ts";
import type { EngineProcess } from "../../engine/engine-process.ts";
import type { EngineOptions } from "../../engine/types.ts";
import type { ModelStore } from "../../store/model-store.ts";
import { ApiError } from "../api-error.ts";
import { type KeepAliveRequest, type LoadedModel, ModelService, type ModelServiceOptions, type ServedModel } from "../model-service.ts";
import { lmStudioStoreNames } from "./store-models.ts";
import { jitAutoEvict } from "../../config.ts";
import { logger } from "../../log.ts";
import { checkModelAllowed, KeyRequest } from "../../keys/key-request.ts";

const log = logger("models");

export class LmStudioModelService extends ModelService {
  /** LM Studio's Auto-Evict: a just-in-time load first unloads the models loaded just in time before it. */
  private readonly autoEvict: boolean;
  /** Engines loaded just in time by a request (not named on `serve`, not loaded through /api/v1/models/load). */
  private readonly jitLoaded = new WeakSet<EngineProcess>();

  constructor(manager: ModelManager, served: ConstructorParameters<typeof ModelService>[1], options: ModelServiceOptions & { store: ModelStore; autoEvict?: boolean }) {
    super(manager, served, options);
    this.autoEvict = options.autoEvict ?? jitAutoEvict();
  }

  /** Profile c always has a store (JIT loading and downloads need one). */
  override get store(): ModelStore {
    return super.store!;
  }

  /** Models named on `serve`, then the store's (newest first); a stored file already served is listed once. */
  override list(): ServedModel[] {
    const served = super.list();
    const paths = new Set(served.map((m) => m.path));
    const stored = this.listStored().flatMap((m) => this.storedOrNothing(m.name) ?? []);
    return [...served, ...stored.filter((m) => !paths.has(m.path))];
  }

  /** The model `name` means (served, a GGUF path, a store name or LM Studio's `org/repo[@quant]`), without falling back to a loaded one. */
  find(name: string, param = "model"): ServedModel | undefined {
    const found = this.findNamed(name, param);
    if (found) return found;
    for (const storeName of lmStudioStoreNames(name, () => this.listStored())) {
      const stored = this.resolveStored(storeName);
      if (stored) return stored;
    }
    return undefined;
  }

  /** A stored model that can be served, or undefined when its blobs are damaged (it is left out of listings). */
  private storedOrNothing(name: string): ServedModel | undefined {
    try {
      return this.resolveStored(name);
    } catch {
      return undefined;
    }
  }

  /** A draft model must be one the name finds: LM Studio refuses an unknown one rather than guessing. */
  override resolveDraft(name: string): ServedModel {
    const found = this.find(name, "draft_model");
    if (found) return found;
    throw this.noModel(name, "draft_model");
  }

  override resolve(name: string | undefined): ServedModel {
    const named = name ? this.find(name) : undefined;
    if (named) return named;
    const recent = this.mostRecentlyUsed();
    if (recent) return recent.model;
    const first = super.list()[0];
    if (first) return first;
    throw this.noModel(name);
  }

  /**
   * The loaded model a request used last, if any is loaded. Generative models come first: a request
   * that names no known model is nearly always a chat, which an embedding model cannot answer.
   */
  mostRecentlyUsed(): LoadedModel | undefined {
    const recentFirst = this.loaded().sort((a, b) => b.lastUsed - a.lastUsed);
    return recentFirst.find((loaded) => !loaded.engine.info.embeddings) ?? recentFirst[0];
  }

  /**
   * A loaded engine of the model when there is one (whatever options it was loaded with: `overrides`
   * apply only to a load), else a new one. Without a request keep-alive, a model loaded just in time
   * gets the profile's TTL; a model named on `serve` stays loaded whatever a request's `ttl` says.
   */
  override async engine(model: ServedModel, overrides: Partial<EngineOptions> = {}, keepAlive?: KeepAliveRequest): Promise<EngineProcess> {
    const keep = model.pinned || !keepAlive ? { ms: this.defaultKeepAliveMs(model), policy: "on-load" as const } : keepAlive;
    // a request's draft_model needs an instance that speculates with that draft (loaded with it, as LM Studio does)
    const draft = overrides.speculative?.draftModelPath;
    const loaded = this.loadedOf(model)
      .filter((l) => draft === undefined || l.engine.options.speculative?.draftModelPath === draft)
      .sort((a, b) => b.lastUsed - a.lastUsed)[0];
    if (loaded) {
      checkModelAllowed(model.id);
      return this.manager.engine(loaded.engine.options, keep.ms, keep.policy);
    }
    if (model.pinned) return super.engine(model, overrides, keep);
    if (this.autoEvict) await this.evictJitLoaded();
    const engine = await super.engine(model, overrides, keep);
    this.jitLoaded.add(engine);
    return engine;
  }

  /** The instances Auto-Evict would unload if `model` were loaded just in time now (the SDK announces them). */
  evictedByJitLoad(model: ServedModel): LoadedModel[] {
    if (!this.autoEvict || model.pinned || this.isLoaded(model)) return [];
    return this.loaded().filter((loaded) => this.jitLoaded.has(loaded.engine));
  }

  /** Unloads the models loaded just in time (a busy one once its requests end). */
  private async evictJitLoaded(): Promise<void> {
    const evicted = this.loaded().filter((loaded) => this.jitLoaded.has(loaded.engine));
    for (const loaded of evicted) log.info(`auto-evict: unloading "${loaded.model.id}" (loaded just in time) before loading another`);
    await Promise.all(evicted.map((loaded) => this.manager.unload(loaded.engine)));
  }

  /**
   * Loads the model with exactly these options (a second instance when the options differ from a loaded
   * one's). `identifier` names the instance (the SDK's `llm.load(key, {identifier})`) when no other has it.
   */
  async load(model: ServedModel, overrides: Partial<EngineOptions>, keepAlive: KeepAliveRequest, identifier?: string): Promise<EngineProcess> {
    if (identifier !== undefined && this.loaded().some((loaded) => this.instanceIds.get(loaded.engine) === identifier)) {
      throw new ApiError(409, `Cannot load model "${model.id}" as "${identifier}": an instance with that identifier is already loaded`, { param: "identifier" });
    }
    const engine = await super.engine(model, overrides, keepAlive);
    this.jitLoaded.delete(engine); // loaded on purpose now: Auto-Evict leaves it alone
    if (identifier !== undefined && !this.instanceIds.has(engine)) this.instanceIds.set(engine, identifier);
    this.released.delete(model.path);
    return engine;
  }

  /** Unloads one loaded instance (once its requests end, when it is busy). */
  unloadInstance(engine: EngineProcess): Promise<void> {
    const loaded = this.loaded().find((l) => l.engine === engine);
    if (loaded?.model.pinned) this.released.add(loaded.model.path);
    return this.manager.unload(engine);
  }

  /** Files of models named on `serve` that were unloaded on request since: no longer reported as loaded. */
  private readonly released = new Set<string>();

  /**
   * Loads the models named on `serve` that are not loaded yet (and were not unloaded on request):
   * LM Studio reports them as loaded, as after `lms load`. A model that fails to load is logged and not
   * tried again here (a request naming it still tries).
   */
  async loadServed(): Promise<void> {
    const waiting = super.list().filter((model) => !this.released.has(model.path) && !this.isLoaded(model));
    // The server's own work, whichever request's listing set it off: no key's models list applies.
    await Promise.all(waiting.map((model) => KeyRequest.outside(() => this.engine(model)).catch((error: Error) => {
      this.released.add(model.path);
      log.error(`Cannot load "${model.id}": ${error.message}`);
    })));
  }

  /** The loaded instance itself, marked as used (its TTL starts again). */
  useInstance(loaded: LoadedModel): Promise<EngineProcess> {
    checkModelAllowed(loaded.model.id);
    return this.manager.engine(loaded.engine.options, this.defaultKeepAliveMs(loaded.model), "on-load");
  }

  /**
   * LM Studio's instance identifier: the model's key, with `:2`, `:3`, … for further instances of the
   * same model. Stable for the engine's lifetime.
   */
  instanceId(loaded: LoadedModel): string {
    const known = this.instanceIds.get(loaded.engine);
    if (known) return known;
    const taken = new Set(this.loaded().flatMap((other) => this.instanceIds.get(other.engine) ?? []));
    let id = loaded.model.id;
    for (let n = 2; taken.has(id); n++) id = `${loaded.model.id}:${n}`;
    this.instanceIds.set(loaded.engine, id);
    return id;
  }

  private readonly instanceIds = new WeakMap<EngineProcess, string>();

  private noModel(name: string | undefined, param = "model"): ApiError {
    const ids = this.list().map((m) => m.id);
    if (ids.length === 0) {
      return new ApiError(400, "No models loaded. Please load a model in the developer page or use the 'lms load' command.", { param, code: "model_not_found" });
    }
    const what = param === "draft_model" ? "draft model" : "model";
    return new ApiError(
      400,
      `Invalid ${what} identifier "${name ?? ""}". Please specify a valid downloaded model (e.g., ${ids.join(", ")}).`,
      { param, code: "model_not_found" },
    );
  }
}
