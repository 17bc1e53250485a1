// A persistent CPU threadpool for a context: its workers stay between decodes instead of being started
// and joined for every graph (what ggml does when none is attached), as llama.cpp's own tools attach one.
// The constructor and destructor live in the CPU back end, loaded at run time, so they are reached
// through its registry's proc addresses, as rpc.ts reaches the RPC back end's.
//
// Contexts whose decodes run on one thread, one after the other (a draft model's beside its target), may
// share a pool: its workers then wait for either's next graph, where two pools' waiting workers would
// spin against each other's computation. The pool is freed when the last context using it is.
import { CFunction, type Pointer } from "bun:ffi";
import { loadNative } from "./native.ts";
import { cstr } from "./strings.ts";
import { asPointer } from "./pointer.ts";

export class CpuThreadpool {
  private users = 1;

  private constructor(readonly pointer: Pointer, private readonly destroy: () => void) {}

  /** A threadpool of `threads` workers, or null where no CPU back end offers one (then ggml starts threads per graph). */
  static create(threads: number): CpuThreadpool | null {
    const n = loadNative();
    const reg = asPointer(n.ggml.ggml_backend_reg_by_name(cstr("CPU")));
    if (!reg) return null;
    const constructor = asPointer(n.ggml.ggml_backend_reg_get_proc_address(reg, cstr("ggml_threadpool_new")));
    const destructor = asPointer(n.ggml.ggml_backend_reg_get_proc_address(reg, cstr("ggml_threadpool_free")));
    if (!constructor || !destructor) return null;
    const pool = asPointer(n.shim.llamux_threadpool_new(constructor, threads));
    if (!pool) return null;
    const freePool = CFunction({ ptr: destructor, args: ["ptr"], returns: "void" });
    return new CpuThreadpool(pool, () => freePool(pool));
  }

  /** One more context uses the pool. */
  share(): this {
    if (this.users === 0) throw new Error("Cannot share a threadpool that was freed");
    this.users++;
    return this;
  }

  /** A context no longer uses the pool; the last one frees it (after that context, whose computation may use it). */
  release(): void {
    if (this.users === 0) return;
    if (--this.users === 0) this.destroy();
  }
}
