import type { Pointer } from "bun:ffi";

/**
 * bun:ffi types returned pointers as `Pointer | bigint | null`; user-space addresses fit in 53 bits
 * (x86-64 and arm64 use at most 48), so a bigint is narrowed to a Pointer without loss.
 */
export function asPointer(value: Pointer | bigint | null): Pointer | null {
  return typeof value === "bigint" ? (Number(value) as Pointer) : value;
}
