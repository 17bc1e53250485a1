// The LoRA adapters requests may name (vLLM's --lora-modules and /v1/load_lora_adapter), loaded against
// the engine's model, and the set applied to its context: the Modelfile's adapters, always, and the one
// adapter of the step's turn (planning/adapter-turns.ts).
//
// Each load gets an id of its own, which the caches key states by: a name loaded again from another file
// must never find the first file's states. An unloaded adapter still serves the requests that named it
// before; it is freed once none is left.
import { applyLoraAdapters, freeLoraAdapter, loadLoraAdapter, type LlamaContext, type LlamaModel, type LoraAdapter } from "../../ffi/llama.ts";
import { kindAt } from "../store/regular-file.ts";
import { LoraAdapterFileError, readLoraAdapter } from "../store/lora-adapter-file.ts";
import { BASE_ADAPTER } from "./planning/adapter-turns.ts";
import { EngineError, type EngineOptions } from "./types.ts";

/** vLLM's defaults: adapters whose requests may hold sequences at once, and the largest rank loaded. */
export const DEFAULT_MAX_LORAS = 1;
export const DEFAULT_MAX_LORA_RANK = 16;
/** Adapters one engine holds loaded at once (each takes memory beside the model's weights). */
export const MAX_LOADED_ADAPTERS = 64;

export interface ServedAdapter {
  /** Unique per load within the engine; never BASE_ADAPTER. */
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly native: LoraAdapter;
}

/**
 * Applies the Modelfile's adapters (`fixed`, always on) to the context, and with `perRequest` (--enable-lora;
 * never on an embedding engine) returns the adapters requests may name, its modules loaded.
 */
export function attachAdapters(
  model: LlamaModel, context: LlamaContext, fixedPaths: readonly string[],
  perRequest: EngineOptions["lora"],
): LoraAdapters | undefined {
  const fixed = fixedPaths.map((path) => loadLoraAdapter(model, path));
  if (fixed.length > 0) applyLoraAdapters(context, fixed.map((adapter) => ({ adapter, scale: 1 })));
  if (!perRequest) return undefined;
  const adapters = new LoraAdapters(model, context, fixed, perRequest.maxLoras, perRequest.maxRank);
  for (const { name, path } of perRequest.modules ?? []) adapters.load(name, path);
  return adapters;
}

export class LoraAdapters {
  private readonly byName = new Map<string, ServedAdapter>();
  /** Unloaded adapters that requests in flight still use. */
  private readonly retired: ServedAdapter[] = [];
  private nextId = BASE_ADAPTER + 1;
  /** The adapter applied to the context now (BASE_ADAPTER: only the fixed ones). */
  private applied = BASE_ADAPTER;

  constructor(
    private readonly model: LlamaModel, private readonly context: LlamaContext,
    /** The Modelfile's adapters, applied at full scale beside every per-request one. */
    private readonly fixed: LoraAdapter[],
    readonly maxLoras = DEFAULT_MAX_LORAS, readonly maxRank = DEFAULT_MAX_LORA_RANK,
  ) {}

  /** The adapters requests may name now. */
  served(): ServedAdapter[] {
    return [...this.byName.values()];
  }

  /**
   * Loads `path` under `name`. The same file under the same name again changes nothing; another file
   * replaces it (its requests in flight finish on the old one). Throws EngineError("invalid_request") with
   * the reason when the file is missing, is no LoRA adapter for this model, or its rank is above the
   * maximum.
   */
  load(name: string, path: string): ServedAdapter {
    const current = this.byName.get(name);
    if (current?.path === path) return current;
    if (!current && this.byName.size + this.retired.length >= MAX_LOADED_ADAPTERS) {
      throw new EngineError("invalid_request", `Loading lora ${name} failed: ${MAX_LOADED_ADAPTERS} adapters are loaded already; unload one first`);
    }
    const failed = (reason: string) => new EngineError("invalid_request", `Loading lora ${name} failed: "${path}" ${reason}`);
    const at = kindAt(path);
    // vLLM's words (its 404 for a missing adapter)
    if (!at) throw new EngineError("invalid_request", `Loading lora ${name} failed: No adapter found for ${path}`);
    if (!at.regular) throw failed(`is ${at.kind}, not a LoRA adapter GGUF file`);
    let rank: number;
    try {
      rank = readLoraAdapter(path, this.model.architecture).rank;
    } catch (error) {
      if (error instanceof LoraAdapterFileError) throw failed(error.reason);
      throw error;
    }
    if (rank > this.maxRank) throw new EngineError("invalid_request", `LoRA rank ${rank} is greater than max_lora_rank ${this.maxRank}.`);
    let native: LoraAdapter;
    try {
      native = loadLoraAdapter(this.model, path);
    } catch (error) {
      throw new EngineError("invalid_request", `Loading lora ${name} failed: ${(error as Error).message}`);
    }
    const adapter: ServedAdapter = { id: this.nextId++, name, path, native };
    if (current) this.retired.push(current);
    this.byName.set(name, adapter);
    return adapter;
  }

  /** Takes the name out of use; false when no adapter has it. Its requests in flight finish on it. */
  unload(name: string): boolean {
    const adapter = this.byName.get(name);
    if (!adapter) return false;
    this.byName.delete(name);
    this.retired.push(adapter);
    return true;
  }

  /** The adapter a request names; EngineError("invalid_request") when none is loaded under that name. */
  resolve(name: string): ServedAdapter {
    const adapter = this.byName.get(name);
    if (!adapter) throw new EngineError("invalid_request", `The lora adapter '${name}' cannot be found.`);
    return adapter;
  }

  /** Applies the fixed adapters and `adapter` (none: the base model) to the context, when that is not the set applied now. */
  apply(adapter: ServedAdapter | undefined): void {
    const id = adapter?.id ?? BASE_ADAPTER;
    if (id === this.applied) return;
    const set = [...this.fixed, ...(adapter ? [adapter.native] : [])].map((native) => ({ adapter: native, scale: 1 }));
    applyLoraAdapters(this.context, set);
    this.applied = id;
  }

  /** Whether unloaded adapters wait to be freed. */
  get hasRetired(): boolean {
    return this.retired.length > 0;
  }

  /** Whether the adapter is still loaded (requests may name it, or requests in flight still use it). */
  holds(adapter: ServedAdapter): boolean {
    return this.byName.get(adapter.name) === adapter || this.retired.includes(adapter);
  }

  /** Frees the unloaded adapters no request uses any more (given the ids of those in use); returns them. */
  freeUnused(inUse: ReadonlySet<number>): ServedAdapter[] {
    const freed: ServedAdapter[] = [];
    for (let i = this.retired.length - 1; i >= 0; i--) {
      const adapter = this.retired[i]!;
      if (inUse.has(adapter.id)) continue;
      if (this.applied === adapter.id) this.apply(undefined);
      freeLoraAdapter(adapter.native);
      this.retired.splice(i, 1);
      freed.push(adapter);
    }
    return freed;
  }
}
