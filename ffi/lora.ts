// LoRA adapters (Modelfile ADAPTER, vLLM's per-request adapters): loaded against a model, which frees
// those still loaded when it is freed, and switched on for a whole context with a scale each.
import { ptr, type Pointer } from "bun:ffi";
import { existsSync } from "node:fs";
import { loadNative, withLlamaError } from "./native.ts";
import { cstr } from "./strings.ts";
import { asPointer } from "./pointer.ts";
import type { LlamaModel } from "./model.ts";
import type { LlamaContext } from "./context.ts";

export interface LoraAdapter {
  path: string;
  pointer: Pointer;
}

/** Loads an adapter GGUF made for `model`'s architecture and shapes; throws with llama.cpp's reason otherwise. */
export function loadLoraAdapter(model: LlamaModel, path: string): LoraAdapter {
  if (!existsSync(path)) throw new Error(`Cannot load LoRA adapter "${path}": no such file`);
  const n = loadNative();
  const { result, error } = withLlamaError(() => asPointer(n.llama.llama_adapter_lora_init(model.pointer, cstr(path))));
  if (!result) throw new Error(`Cannot load LoRA adapter "${path}" for "${model.path}": ${error?.trim() ?? "llama.cpp refused it"}`);
  return { path, pointer: result };
}

/** Applies the adapters (each with its scale, 1 = as trained) to every sequence of the context. */
export function applyLoraAdapters(context: LlamaContext, adapters: Array<{ adapter: LoraAdapter; scale: number }>): void {
  const n = loadNative();
  const pointers = new BigUint64Array(adapters.map(({ adapter }) => BigInt(adapter.pointer)));
  const scales = new Float32Array(adapters.map(({ scale }) => scale));
  const status = n.llama.llama_set_adapters_lora(
    context.pointer, adapters.length > 0 ? ptr(pointers) : null, adapters.length, adapters.length > 0 ? ptr(scales) : null,
  );
  if (status !== 0) throw new Error(`Cannot apply ${adapters.length} LoRA adapter(s): llama_set_adapters_lora returned ${status}`);
}

/**
 * Frees an adapter before its model is freed (an adapter unloaded at run time). No context may have it
 * applied: apply another set first.
 */
export function freeLoraAdapter(adapter: LoraAdapter): void {
  loadNative().llama.llama_adapter_lora_free(adapter.pointer);
}
