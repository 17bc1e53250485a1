// A persistent CPU threadpool for a context: its workers stay between decodes instead of being started
// and joined for every graph (what ggml does when none is attached), as llama.cpp's own tools attach one.
// The constructor and destructor live in the CPU back end, loaded at run time, so they are reached
// through its registry's proc addresses, as rpc.ts reaches the RPC back end's.
import { CFunction, type Pointer } from "bun:ffi";
import { loadNative } from "./native.ts";
import { cstr } from "./strings.ts";
import { asPointer } from "./pointer.ts";

/** A threadpool of `threads` workers, or null where no CPU back end offers one (then ggml starts threads per graph). */
export function createCpuThreadpool(threads: number): { pool: Pointer; free: () => void } | null {
  const n = loadNative();
  const reg = asPointer(n.ggml.ggml_backend_reg_by_name(cstr("CPU")));
  if (!reg) return null;
  const constructor = asPointer(n.ggml.ggml_backend_reg_get_proc_address(reg, cstr("ggml_threadpool_new")));
  const destructor = asPointer(n.ggml.ggml_backend_reg_get_proc_address(reg, cstr("ggml_threadpool_free")));
  if (!constructor || !destructor) return null;
  const pool = asPointer(n.shim.llamux_threadpool_new(constructor, threads));
  if (!pool) return null;
  const freePool = CFunction({ ptr: destructor, args: ["ptr"], returns: "void" });
  return { pool, free: () => freePool(pool) };
}
