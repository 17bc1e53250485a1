import type { Pointer } from "bun:ffi";

// Lifetime guard for wrappers that own a native pointer: use after dispose() throws instead of crashing.
export class DisposedError extends Error {
  constructor(what: string) {
    super(`Cannot use ${what}: it was already disposed`);
    this.name = "DisposedError";
  }
}

export abstract class NativeHandle {
  #pointer: Pointer | null;
  constructor(pointer: Pointer, private readonly what: string) {
    this.#pointer = pointer;
  }
  protected get handle(): Pointer {
    if (this.#pointer === null) throw new DisposedError(this.what);
    return this.#pointer;
  }
  get disposed(): boolean {
    return this.#pointer === null;
  }
  protected abstract free(pointer: Pointer): void;
  dispose(): void {
    if (this.#pointer === null) return;
    const p = this.#pointer;
    this.#pointer = null;
    this.free(p);
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
