// The MessagePack encoder the KV-cache events need: nil, booleans, integers (bigint up to 64 bits, as
// msgspec writes Python ints), float64, UTF-8 strings, byte strings, arrays and string-keyed maps, each
// in its shortest form. Maps keep their insertion order, as msgspec writes struct fields.
export type MsgpackValue =
  | null | boolean | number | bigint | string | Uint8Array | MsgpackValue[] | { [key: string]: MsgpackValue };

export function encodeMsgpack(value: MsgpackValue): Uint8Array {
  const writer = new ByteWriter();
  write(writer, value);
  return writer.bytes();
}

function write(out: ByteWriter, value: MsgpackValue): void {
  if (value === null) return out.u8(0xc0);
  if (typeof value === "boolean") return out.u8(value ? 0xc3 : 0xc2);
  if (typeof value === "bigint") return writeInteger(out, value);
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) return writeInteger(out, BigInt(value));
    out.u8(0xcb);
    return out.f64(value);
  }
  if (typeof value === "string") {
    const bytes = new TextEncoder().encode(value);
    writeHeader(out, bytes.length, 0xa0, 31, [0xd9, 0xda, 0xdb]);
    return out.raw(bytes);
  }
  if (value instanceof Uint8Array) {
    writeHeader(out, value.length, undefined, 0, [0xc4, 0xc5, 0xc6]);
    return out.raw(value);
  }
  if (Array.isArray(value)) {
    writeHeader(out, value.length, 0x90, 15, [undefined, 0xdc, 0xdd]);
    for (const item of value) write(out, item);
    return;
  }
  const entries = Object.entries(value);
  writeHeader(out, entries.length, 0x80, 15, [undefined, 0xde, 0xdf]);
  for (const [key, item] of entries) {
    write(out, key);
    write(out, item);
  }
}

/** A length prefix: the fix form up to `fixMax`, else the 8-, 16- or 32-bit form (undefined: none of that width). */
function writeHeader(out: ByteWriter, length: number, fix: number | undefined, fixMax: number, wide: [number | undefined, number, number]): void {
  if (fix !== undefined && length <= fixMax) return out.u8(fix | length);
  if (wide[0] !== undefined && length <= 0xff) return out.u8(wide[0], length);
  if (length <= 0xffff) {
    out.u8(wide[1]);
    return out.u16(length);
  }
  if (length > 0xffffffff) throw new RangeError(`Cannot encode ${length} items in MessagePack: more than 2^32 - 1`);
  out.u8(wide[2]);
  out.u32(length);
}

function writeInteger(out: ByteWriter, n: bigint): void {
  if (n >= 0n) {
    if (n <= 0x7fn) return out.u8(Number(n));
    if (n <= 0xffn) return out.u8(0xcc, Number(n));
    if (n <= 0xffffn) return (out.u8(0xcd), out.u16(Number(n)));
    if (n <= 0xffffffffn) return (out.u8(0xce), out.u32(Number(n)));
    if (n > 0xffffffffffffffffn) throw new RangeError(`Cannot encode ${n} in MessagePack: more than 64 bits`);
    out.u8(0xcf);
    return out.u64(n);
  }
  if (n >= -32n) return out.u8(0x100 + Number(n));
  if (n >= -0x80n) return out.u8(0xd0, 0x100 + Number(n));
  if (n >= -0x8000n) return (out.u8(0xd1), out.u16(0x10000 + Number(n)));
  if (n >= -0x80000000n) return (out.u8(0xd2), out.u32(0x100000000 + Number(n)));
  if (n < -0x8000000000000000n) throw new RangeError(`Cannot encode ${n} in MessagePack: less than -2^63`);
  out.u8(0xd3);
  out.u64(BigInt.asUintN(64, n));
}

/** A growing big-endian byte buffer. */
export class ByteWriter {
  private buffer = new Uint8Array(256);
  private view = new DataView(this.buffer.buffer);
  private length = 0;

  private reserve(n: number): number {
    if (this.length + n > this.buffer.length) {
      const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  u8(...values: number[]): void {
    const at = this.reserve(values.length);
    this.buffer.set(values, at);
  }
  // (reserve first: it may replace the buffer and its view)
  u16(n: number): void {
    const at = this.reserve(2);
    this.view.setUint16(at, n);
  }
  u32(n: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, n);
  }
  u64(n: bigint): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, n);
  }
  f64(n: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, n);
  }
  raw(bytes: Uint8Array): void {
    const at = this.reserve(bytes.length);
    this.buffer.set(bytes, at);
  }

  bytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}
