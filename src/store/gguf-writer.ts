// Writes GGUF v3 files: metadata of any type, tensors streamed to disk one chunk at a time.
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VERSION,
  GgufValueType,
  type GgmlType,
  type GgufArray,
  type GgufArrayItems,
  type GgufKv,
  ggmlTensorByteSize,
} from "./gguf-types.ts";

export interface GgufTensorSink {
  /** appends bytes of the current tensor; the sink copies them, so the caller may reuse the buffer */
  write(chunk: ArrayBufferView): void;
}

export interface GgufTensorInput {
  name: string;
  /** ggml order: shape[0] is the number of elements in one row */
  shape: readonly number[];
  type: GgmlType;
  /** the whole tensor in ggml layout (a Float32Array for F32, Uint16Array of half bits for F16, raw bytes otherwise) */
  data?: ArrayBufferView;
  /** streams the tensor instead: called once, must write exactly the tensor's byte size */
  write?: (sink: GgufTensorSink) => void | Promise<void>;
}

export interface GgufWriteInput {
  metadata: Iterable<readonly [string, GgufKv]>;
  tensors: readonly GgufTensorInput[];
}

export class GgufWriteError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`Cannot write GGUF "${path}": ${reason}`);
    this.name = "GgufWriteError";
  }
}

/** Builders for typed metadata values: `ggufKv.uint32(4)`, `ggufKv.array(GgufValueType.STRING, tokens)`. */
export const ggufKv = {
  uint8: (value: number): GgufKv => ({ type: GgufValueType.UINT8, value }),
  int8: (value: number): GgufKv => ({ type: GgufValueType.INT8, value }),
  uint16: (value: number): GgufKv => ({ type: GgufValueType.UINT16, value }),
  int16: (value: number): GgufKv => ({ type: GgufValueType.INT16, value }),
  uint32: (value: number): GgufKv => ({ type: GgufValueType.UINT32, value }),
  int32: (value: number): GgufKv => ({ type: GgufValueType.INT32, value }),
  float32: (value: number): GgufKv => ({ type: GgufValueType.FLOAT32, value }),
  float64: (value: number): GgufKv => ({ type: GgufValueType.FLOAT64, value }),
  uint64: (value: bigint | number): GgufKv => ({ type: GgufValueType.UINT64, value: BigInt(value) }),
  int64: (value: bigint | number): GgufKv => ({ type: GgufValueType.INT64, value: BigInt(value) }),
  bool: (value: boolean): GgufKv => ({ type: GgufValueType.BOOL, value }),
  string: (value: string): GgufKv => ({ type: GgufValueType.STRING, value }),
  array(itemType: GgufValueType, items: GgufArrayItems | readonly number[] | readonly bigint[]): GgufArray {
    const value = Array.isArray(items) ? toTypedItems(itemType, items) : (items as GgufArrayItems);
    return { type: GgufValueType.ARRAY, itemType, length: value.length, value };
  },
};

function toTypedItems(itemType: GgufValueType, items: readonly unknown[]): GgufArrayItems {
  switch (itemType) {
    case GgufValueType.UINT8:
      return Uint8Array.from(items as number[]);
    case GgufValueType.INT8:
      return Int8Array.from(items as number[]);
    case GgufValueType.UINT16:
      return Uint16Array.from(items as number[]);
    case GgufValueType.INT16:
      return Int16Array.from(items as number[]);
    case GgufValueType.UINT32:
      return Uint32Array.from(items as number[]);
    case GgufValueType.INT32:
      return Int32Array.from(items as number[]);
    case GgufValueType.FLOAT32:
      return Float32Array.from(items as number[]);
    case GgufValueType.FLOAT64:
      return Float64Array.from(items as number[]);
    case GgufValueType.UINT64:
      return BigUint64Array.from(items as (number | bigint)[], (v) => BigInt(v));
    case GgufValueType.INT64:
      return BigInt64Array.from(items as (number | bigint)[], (v) => BigInt(v));
    default:
      return items as GgufArrayItems; // strings, booleans, nested arrays are kept as given
  }
}

const INTEGER_RANGES: Partial<Record<GgufValueType, readonly [number, number]>> = {
  [GgufValueType.UINT8]: [0, 0xff],
  [GgufValueType.INT8]: [-0x80, 0x7f],
  [GgufValueType.UINT16]: [0, 0xffff],
  [GgufValueType.INT16]: [-0x8000, 0x7fff],
  [GgufValueType.UINT32]: [0, 0xffffffff],
  [GgufValueType.INT32]: [-0x80000000, 0x7fffffff],
};

/** Growable little-endian byte buffer for the header. */
class HeaderEncoder {
  bytes = new Uint8Array(1 << 16);
  view = new DataView(this.bytes.buffer);
  length = 0;
  private readonly encoder = new TextEncoder();

  constructor(private readonly fail: (reason: string) => never) {}

  private reserve(n: number): void {
    if (this.length + n <= this.bytes.byteLength) return;
    const bigger = new Uint8Array(Math.max(this.length + n, this.bytes.byteLength * 2));
    bigger.set(this.bytes.subarray(0, this.length));
    this.bytes = bigger;
    this.view = new DataView(bigger.buffer);
  }

  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }

  u64(v: number | bigint): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }

  raw(bytes: Uint8Array): void {
    this.reserve(bytes.byteLength);
    this.bytes.set(bytes, this.length);
    this.length += bytes.byteLength;
  }

  string(s: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 unit
    this.reserve(8 + s.length * 3);
    const { written } = this.encoder.encodeInto(s, this.bytes.subarray(this.length + 8));
    this.view.setBigUint64(this.length, BigInt(written), true);
    this.length += 8 + written;
  }

  value(key: string, type: GgufValueType, value: unknown): void {
    const range = INTEGER_RANGES[type];
    if (range) {
      if (typeof value !== "number" || !Number.isInteger(value) || value < range[0] || value > range[1]) {
        this.fail(`value ${String(value)} of "${key}" does not fit ${GgufValueType[type].toLowerCase()}`);
      }
    }
    this.reserve(8);
    const at = this.length;
    switch (type) {
      case GgufValueType.UINT8:
        this.view.setUint8(at, value as number);
        this.length += 1;
        return;
      case GgufValueType.INT8:
        this.view.setInt8(at, value as number);
        this.length += 1;
        return;
      case GgufValueType.BOOL:
        if (typeof value !== "boolean") this.fail(`value of "${key}" must be a boolean`);
        this.view.setUint8(at, value ? 1 : 0);
        this.length += 1;
        return;
      case GgufValueType.UINT16:
        this.view.setUint16(at, value as number, true);
        this.length += 2;
        return;
      case GgufValueType.INT16:
        this.view.setInt16(at, value as number, true);
        this.length += 2;
        return;
      case GgufValueType.UINT32:
        this.view.setUint32(at, value as number, true);
        this.length += 4;
        return;
      case GgufValueType.INT32:
        this.view.setInt32(at, value as number, true);
        this.length += 4;
        return;
      case GgufValueType.FLOAT32:
        if (typeof value !== "number") this.fail(`value of "${key}" must be a number`);
        this.view.setFloat32(at, value as number, true);
        this.length += 4;
        return;
      case GgufValueType.FLOAT64:
        if (typeof value !== "number") this.fail(`value of "${key}" must be a number`);
        this.view.setFloat64(at, value as number, true);
        this.length += 8;
        return;
      case GgufValueType.UINT64:
      case GgufValueType.INT64: {
        const big = typeof value === "bigint" ? value : typeof value === "number" && Number.isInteger(value) ? BigInt(value) : null;
        if (big === null) this.fail(`value of "${key}" must be an integer`);
        const fits = type === GgufValueType.UINT64 ? big! >= 0n && big! < 1n << 64n : big! >= -(1n << 63n) && big! < 1n << 63n;
        if (!fits) this.fail(`value ${big} of "${key}" does not fit ${GgufValueType[type].toLowerCase()}`);
        if (type === GgufValueType.UINT64) this.view.setBigUint64(at, big!, true);
        else this.view.setBigInt64(at, big!, true);
        this.length += 8;
        return;
      }
      case GgufValueType.STRING:
        if (typeof value !== "string") this.fail(`value of "${key}" must be a string`);
        this.string(value as string);
        return;
      default:
        this.fail(`unknown value type ${type} for "${key}"`);
    }
  }

  array(key: string, array: GgufArray): void {
    const items = array.value;
    if (items === null) this.fail(`array "${key}" has no items (it was skipped when read)`);
    this.u32(array.itemType);
    this.u64(items!.length);
    if (ArrayBuffer.isView(items) && array.itemType !== GgufValueType.BOOL) {
      const expected = TYPED_ARRAY_OF[array.itemType];
      if (expected === undefined || !(items instanceof expected)) {
        this.fail(`items of array "${key}" do not match item type ${GgufValueType[array.itemType]}`);
      }
      this.raw(new Uint8Array(items.buffer, items.byteOffset, items.byteLength));
      return;
    }
    for (const item of items as readonly unknown[]) {
      if (array.itemType === GgufValueType.ARRAY) this.array(key, item as GgufArray);
      else this.value(key, array.itemType, item);
    }
  }
}

const TYPED_ARRAY_OF: Partial<Record<GgufValueType, Function>> = {
  [GgufValueType.UINT8]: Uint8Array,
  [GgufValueType.INT8]: Int8Array,
  [GgufValueType.UINT16]: Uint16Array,
  [GgufValueType.INT16]: Int16Array,
  [GgufValueType.UINT32]: Uint32Array,
  [GgufValueType.INT32]: Int32Array,
  [GgufValueType.FLOAT32]: Float32Array,
  [GgufValueType.FLOAT64]: Float64Array,
  [GgufValueType.UINT64]: BigUint64Array,
  [GgufValueType.INT64]: BigInt64Array,
};

/** Buffers small writes (norm vectors, padding) so a file with many tiny tensors is not one syscall each. */
class FileOutput {
  private readonly buffer = new Uint8Array(8 << 20);
  private used = 0;
  written = 0;

  constructor(private readonly fd: number) {}

  write(bytes: Uint8Array): void {
    if (bytes.byteLength >= this.buffer.byteLength) {
      this.flush();
      this.writeFully(bytes);
      return;
    }
    if (this.used + bytes.byteLength > this.buffer.byteLength) this.flush();
    this.buffer.set(bytes, this.used);
    this.used += bytes.byteLength;
  }

  flush(): void {
    if (this.used === 0) return;
    this.writeFully(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  private writeFully(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(this.fd, bytes, done, bytes.byteLength - done);
    this.written += bytes.byteLength;
  }
}

function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

function asBytes(view: ArrayBufferView): Uint8Array {
  return view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * Writes a GGUF v3 file. Tensor data is streamed in the order given, so only one chunk is in memory at once.
 * Alignment comes from the "general.alignment" metadata value (default 32). Returns the file size.
 * A failed write removes the partial file.
 */
export async function writeGguf(path: string, input: GgufWriteInput): Promise<number> {
  const fail = (reason: string): never => {
    throw new GgufWriteError(path, reason);
  };
  const metadata = new Map<string, GgufKv>();
  for (const [key, kv] of input.metadata) {
    if (metadata.has(key)) fail(`duplicate key "${key}"`);
    metadata.set(key, kv);
  }
  let alignment = GGUF_DEFAULT_ALIGNMENT;
  const alignmentKv = metadata.get("general.alignment");
  if (alignmentKv) {
    if (alignmentKv.type !== GgufValueType.UINT32) fail(`"general.alignment" must be a uint32`);
    alignment = alignmentKv.value as number;
    if (alignment === 0 || (alignment & (alignment - 1)) !== 0) fail(`alignment ${alignment} is not a power of two`);
  }

  const header = new HeaderEncoder(fail);
  header.u32(GGUF_MAGIC);
  header.u32(GGUF_VERSION);
  header.u64(input.tensors.length);
  header.u64(metadata.size);
  for (const [key, kv] of metadata) {
    header.string(key);
    header.u32(kv.type);
    if (kv.type === GgufValueType.ARRAY) header.array(key, kv);
    else header.value(key, kv.type, kv.value);
  }

  const names = new Set<string>();
  const sizes: number[] = [];
  let offset = 0;
  for (const tensor of input.tensors) {
    if (names.has(tensor.name)) fail(`duplicate tensor "${tensor.name}"`);
    names.add(tensor.name);
    if (tensor.shape.length < 1 || tensor.shape.length > 4) fail(`tensor "${tensor.name}" must have 1 to 4 dimensions`);
    if (!tensor.shape.every((d) => Number.isInteger(d) && d > 0)) fail(`tensor "${tensor.name}" has a bad shape [${tensor.shape.join(", ")}]`);
    if ((tensor.data === undefined) === (tensor.write === undefined)) fail(`tensor "${tensor.name}" needs exactly one of data and write`);
    let size = 0;
    try {
      size = ggmlTensorByteSize(tensor.type, tensor.shape);
    } catch (error) {
      fail(`tensor "${tensor.name}": ${(error as Error).message}`);
    }
    sizes.push(size);
    header.string(tensor.name);
    header.u32(tensor.shape.length);
    for (const d of tensor.shape) header.u64(d);
    header.u32(tensor.type);
    header.u64(offset);
    offset = alignUp(offset + size, alignment);
  }

  const padding = new Uint8Array(alignment);
  const fd = openSync(path, "w");
  try {
    const out = new FileOutput(fd);
    out.write(header.bytes.subarray(0, header.length));
    out.write(padding.subarray(0, alignUp(header.length, alignment) - header.length));
    for (const [i, tensor] of input.tensors.entries()) {
      const expected = sizes[i]!;
      let got = 0;
      const sink: GgufTensorSink = {
        write(chunk) {
          const bytes = asBytes(chunk);
          got += bytes.byteLength;
          if (got > expected) fail(`tensor "${tensor.name}" got more than its ${expected} bytes`);
          out.write(bytes);
        },
      };
      if (tensor.data !== undefined) sink.write(tensor.data);
      else await tensor.write!(sink);
      if (got !== expected) fail(`tensor "${tensor.name}" got ${got} bytes, expected ${expected}`);
      out.write(padding.subarray(0, alignUp(got, alignment) - got));
    }
    out.flush();
    closeSync(fd);
    return out.written;
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true }); // a half-written model must not look like a model
    throw error;
  }
}
