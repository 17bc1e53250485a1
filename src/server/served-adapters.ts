// The per-request LoRA adapters of one listener's model service, over the server's registry: adapters as
// models a request names (vLLM: `"model": "sql-lora"`), each on its parent served model's engine; the
// engine options that load --lora-modules with that model; keeping every engine's adapters as the registry
// says (an engine started again after a crash or a context growth gets the run-time ones back); and
// /v1/load_lora_adapter and /v1/unload_lora_adapter with vLLM's answers and errors.
import type { EngineProcess } from "../engine/engine-process.ts";
import { EngineError, type EngineOptions } from "../engine/types.ts";
import { kindAt } from "../store/regular-file.ts";
import { ApiError, badRequest, notFound } from "./api-error.ts";
import { invalidUserInput, type LoraRegistry, type RegisteredAdapter } from "./lora-registry.ts";
import type { ServedModel } from "./model-service.ts";
import { logger } from "../log.ts";

const log = logger("models");

/** What a served-adapter operation needs of its model service. */
export interface AdapterHost {
  /** The parent's engine, loaded when it is not. */
  engine(model: ServedModel): Promise<EngineProcess>;
  /** The parent's engines loaded now. */
  loadedEngines(model: ServedModel): EngineProcess[];
}

export class ServedAdapters {
  constructor(readonly registry: LoraRegistry, private readonly served: () => readonly ServedModel[]) {}

  /** The served model an adapter adapts: its base_model_name when that is served, else the first served model. */
  parentOf(adapter: Pick<RegisteredAdapter, "base">): ServedModel | undefined {
    const served = this.served();
    return served.find((model) => model.id === adapter.base) ?? served[0];
  }

  /** Every adapter as a model requests may name. */
  models(): ServedModel[] {
    return this.registry.list().flatMap((adapter) => {
      const model = this.asModel(adapter);
      return model ? [model] : [];
    });
  }

  /** The adapter of that name as a model; undefined when there is none. */
  find(name: string): ServedModel | undefined {
    const adapter = this.registry.get(name);
    return adapter && this.asModel(adapter);
  }

  /** The LoRA load options of a served model's engine: its --lora-modules and the bounds. */
  engineOptions(parent: ServedModel): Pick<EngineOptions, "lora"> {
    const { modules, maxLoras, maxRank } = this.registry.settings;
    const own = modules.filter((module) => this.parentOf(module)?.id === parent.id).map(({ name, path }) => ({ name, path }));
    return { lora: { modules: own, maxLoras, maxRank } };
  }

  /**
   * Makes the engine hold the parent's adapters as the registry lists them. An adapter that no longer loads
   * (its file went away) is logged and no longer served; when it is the one `requested` names, its error is thrown.
   */
  async sync(engine: EngineProcess, parent: ServedModel, requested: ServedModel): Promise<void> {
    const wanted = this.registry.list().filter((adapter) => this.parentOf(adapter)?.id === parent.id);
    for (const name of [...engine.adapters.keys()]) {
      if (!wanted.some((adapter) => adapter.name === name)) await engine.unloadAdapter(name);
    }
    for (const adapter of wanted) {
      if (engine.adapters.get(adapter.name) === adapter.path) continue;
      try {
        await engine.loadAdapter(adapter.name, adapter.path);
      } catch (error) {
        log.warn(`LoRA adapter "${adapter.name}" no longer loads into "${parent.id}", so it is no longer served: ${(error as Error).message}`);
        this.registry.remove(adapter.name);
        if (requested.adapter?.name === adapter.name) throw loadError(error);
      }
    }
  }

  /** vLLM's POST /v1/load_lora_adapter: the success message, or an ApiError in vLLM's words. */
  load(host: AdapterHost, request: { lora_name?: string | undefined; lora_path?: string | undefined; load_inplace?: boolean | undefined }): Promise<string> {
    const { lora_name: name, lora_path: path } = request;
    if (!name || !path) throw invalidUserInput("Both 'lora_name' and 'lora_path' must be provided.");
    return this.registry.serialized(async () => {
      if (this.registry.get(name) && !request.load_inplace) {
        throw invalidUserInput(`The lora adapter '${name}' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.`);
      }
      if (this.served().some((model) => model.id === name)) throw invalidUserInput(`The lora adapter '${name}' cannot take the name of a served model.`);
      this.registry.checkRoom(name);
      const at = kindAt(path);
      // vLLM's LoRAAdapterNotFoundError
      if (!at) throw notFound(`Loading lora ${name} failed: No adapter found for ${path}`);
      if (!at.regular) throw badRequest(`Loading lora ${name} failed: "${path}" is ${at.kind}, not a LoRA adapter GGUF file`);
      const parent = this.parentOf({});
      if (!parent) throw badRequest("No model is being served to load the LoRA adapter onto");
      const engine = await host.engine(parent);
      await engine.loadAdapter(name, path).catch((error: unknown) => {
        throw loadError(error);
      });
      // (other engines of the parent, a context grown in another listener's instance, get it at their next use)
      this.registry.add({ name, path, base: parent.id });
      log.info(`loaded LoRA adapter "${name}" from "${path}" onto "${parent.id}"`);
      return `Success: LoRA adapter '${name}' added successfully.`;
    });
  }

  /** vLLM's POST /v1/unload_lora_adapter: the success message, or an ApiError in vLLM's words. */
  unload(host: AdapterHost, request: { lora_name?: string | undefined }): Promise<string> {
    const name = request.lora_name;
    if (!name) throw invalidUserInput("'lora_name' needs to be provided to unload a LoRA adapter.");
    return this.registry.serialized(async () => {
      const adapter = this.registry.get(name);
      if (!adapter) throw notFound(`The lora adapter '${name}' cannot be found.`);
      this.registry.remove(name);
      const parent = this.parentOf(adapter);
      // requests in flight on it finish first; engines not loaded now never get it back
      for (const engine of parent ? host.loadedEngines(parent) : []) await engine.unloadAdapter(name).catch(() => false);
      log.info(`unloaded LoRA adapter "${name}"`);
      return `Success: LoRA adapter '${name}' removed successfully.`;
    });
  }

  private asModel(adapter: RegisteredAdapter): ServedModel | undefined {
    const parent = this.parentOf(adapter);
    if (!parent) return undefined;
    return { ...parent, id: adapter.name, created: adapter.created, adapter: { name: adapter.name, path: adapter.path, parent: parent.id } };
  }
}

/** An engine's refusal of an adapter file as the answer: the request's fault (400) unless the engine failed. */
function loadError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof EngineError && error.code === "invalid_request") return badRequest(error.message);
  return new ApiError(500, (error as Error).message, { cause: error });
}
