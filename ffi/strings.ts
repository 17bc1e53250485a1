// C string helpers for bun:ffi calls.
import { ptr, CString, type Pointer } from "bun:ffi";

const encoder = new TextEncoder();

/** A NUL-terminated UTF-8 copy of `text`, kept alive by the returned buffer. */
export function cstr(text: string): Uint8Array {
  const bytes = new Uint8Array(Buffer.byteLength(text) + 1);
  encoder.encodeInto(text, bytes);
  return bytes;
}

/** Reads a C string returned by llama.cpp; null pointers become undefined. */
export function readCString(pointer: Pointer | null): string | undefined {
  return pointer ? new CString(pointer).toString() : undefined;
}

/** Calls a llama.cpp "write into buf, return needed length" function, growing the buffer once if needed. */
export function readIntoBuffer(call: (buf: Uint8Array, size: number) => number, initial = 256): string | undefined {
  let buf = new Uint8Array(initial);
  let n = call(buf, buf.length);
  if (n < 0) return undefined;
  if (n >= buf.length) {
    buf = new Uint8Array(n + 1);
    n = call(buf, buf.length);
  }
  return new TextDecoder().decode(buf.subarray(0, n));
}

export { ptr };
