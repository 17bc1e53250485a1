// The LoRA adapters a server offers per request (vLLM's --enable-lora): those of --lora-modules and those
// loaded at run time through /v1/load_lora_adapter. One registry serves every listener of a server, as
// their engines are shared: each listener's model service loads what it lists into the engines of the
// served models, and a request that names an adapter runs on its parent's engine with it.
import { ApiError } from "./api-error.ts";
import { MAX_LOADED_ADAPTERS } from "../engine/lora-adapters.ts";

/** An adapter as --lora-modules gives it (`name=path`, or vLLM's JSON with base_model_name). */
export interface LoraModuleSpec {
  name: string;
  path: string;
  /** The served model it adapts (vLLM's base_model_name); unset, or no served model of that name: the first one. */
  base?: string;
}

/** --enable-lora's settings: the adapters to load with the served model, and the engine's bounds. */
export interface LoraServing {
  modules: LoraModuleSpec[];
  /** Adapters whose requests may hold sequences at once (--max-loras). */
  maxLoras: number;
  /** The largest adapter rank loaded (--max-lora-rank). */
  maxRank: number;
}

export interface RegisteredAdapter extends LoraModuleSpec {
  /** Unix seconds, for model listings. */
  created: number;
}

/** vLLM's words for a request it refuses before loading anything (its InvalidUserInput). */
export const invalidUserInput = (message: string) => new ApiError(400, message, { type: "InvalidUserInput" });

export class LoraRegistry {
  private readonly adapters = new Map<string, RegisteredAdapter>();
  /** Run-time loads and unloads, one at a time (vLLM locks per name). */
  private updates: Promise<unknown> = Promise.resolve();

  constructor(readonly settings: LoraServing) {
    const created = Math.floor(Date.now() / 1000);
    for (const module of settings.modules) this.adapters.set(module.name, { ...module, created });
  }

  get(name: string): RegisteredAdapter | undefined {
    return this.adapters.get(name);
  }

  list(): RegisteredAdapter[] {
    return [...this.adapters.values()];
  }

  /** Throws unless an adapter of this name may be added (at most MAX_LOADED_ADAPTERS, as each engine holds). */
  checkRoom(name: string): void {
    if (!this.adapters.has(name) && this.adapters.size >= MAX_LOADED_ADAPTERS) {
      throw invalidUserInput(`Cannot load lora adapter '${name}': ${MAX_LOADED_ADAPTERS} adapters are loaded already; unload one first`);
    }
  }

  /** Registers a loaded adapter (replacing one of the same name). */
  add(module: LoraModuleSpec): void {
    this.adapters.set(module.name, { ...module, created: Math.floor(Date.now() / 1000) });
  }

  remove(name: string): boolean {
    return this.adapters.delete(name);
  }

  /** Runs a load or unload after those asked for before it. */
  serialized<T>(update: () => Promise<T>): Promise<T> {
    const next = this.updates.then(update, update);
    this.updates = next.catch(() => {});
    return next;
  }
}
