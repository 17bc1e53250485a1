// Lifetime guard for wrappers that own a native pointer: use after dispose() throws instead of crashing.
export class DisposedError extends Error {
  constructor(what: string) {
    super(`Cannot use ${what}: it was already disposed`);
    this.name = "DisposedError";
  }
}

export abstract class NativeHandle {
  #pointer: number | null;
  constructor(pointer: number, private readonly what: string) {
    this.#pointer = pointer;
  }
  protected get handle(): number {
    if (this.#pointer === null) throw new DisposedError(this.what);
    return this.#pointer;
  }
  get disposed(): boolean {
    return this.#pointer === null;
  }
  protected abstract free(pointer: number): void;
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
