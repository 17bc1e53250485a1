// Reads the header of a GGUF file (metadata and tensor infos) without touching tensor data.
import { closeSync, fstatSync, readSync } from "node:fs";
import { NotRegularFileError, openRegularFileSync } from "./regular-file.ts";
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GgufValueType,
  type GgufArray,
  type GgufArrayItems,
  type GgufHeader,
  type GgufKv,
  type GgufMetadata,
  type GgufTensorInfo,
  ggmlTensorByteSize,
  ggmlTypeName,
  isGgmlType,
} from "./gguf-types.ts";

export interface ReadGgufOptions {
  /** Arrays longer than this are skipped (value null, length kept): listing models need not decode 150k tokens. */
  maxArrayLength?: number;
  /** Accept a file whose tensor data is cut short (e.g. a download in progress). */
  allowTruncatedData?: boolean;
}

const CHUNK_SIZE = 1 << 20;
const MAX_TENSOR_DIMS = 4; // GGML_MAX_DIMS

export class GgufReadError extends Error {
  constructor(
    readonly source: string,
    readonly reason: string,
  ) {
    super(`Cannot read GGUF "${source}": ${reason}`);
    this.name = "GgufReadError";
  }
}

interface ByteSource {
  readonly size: number;
  /** copies up to `length` bytes at `position` into `target` and returns how many it copied */
  read(target: Uint8Array, targetOffset: number, length: number, position: number): number;
}

function fileSource(fd: number): ByteSource {
  return {
    size: fstatSync(fd).size,
    read: (target, targetOffset, length, position) => readSync(fd, target, targetOffset, length, position),
  };
}

function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.byteLength,
    read(target, targetOffset, length, position) {
      const n = Math.max(0, Math.min(length, bytes.byteLength - position));
      target.set(bytes.subarray(position, position + n), targetOffset);
      return n;
    },
  };
}

/** Reads forward through a source with a refillable buffer, so only the header is ever loaded. */
class Cursor {
  private buffer = new Uint8Array(CHUNK_SIZE);
  private view = new DataView(this.buffer.buffer);
  private bufferStart = 0; // file offset of buffer[0]
  private pos = 0; // read position inside buffer
  private end = 0; // valid bytes in buffer
  private readonly decoder = new TextDecoder("utf-8");

  constructor(
    private readonly source: ByteSource,
    private readonly fail: (reason: string) => never,
  ) {}

  get offset(): number {
    return this.bufferStart + this.pos;
  }

  private ensure(n: number): void {
    if (this.end - this.pos >= n) return;
    if (this.offset + n > this.source.size) this.fail("file ends inside the header");
    const remaining = this.end - this.pos;
    if (n > this.buffer.byteLength) {
      const bigger = new Uint8Array(Math.max(n, this.buffer.byteLength * 2));
      bigger.set(this.buffer.subarray(this.pos, this.end));
      this.buffer = bigger;
      this.view = new DataView(bigger.buffer);
    } else {
      this.buffer.copyWithin(0, this.pos, this.end);
    }
    this.bufferStart += this.pos;
    this.pos = 0;
    this.end = remaining;
    while (this.end < n) {
      const got = this.source.read(this.buffer, this.end, this.buffer.byteLength - this.end, this.bufferStart + this.end);
      if (got <= 0) this.fail("file ends inside the header");
      this.end += got;
    }
  }

  skip(n: number): void {
    if (this.end - this.pos >= n) {
      this.pos += n;
      return;
    }
    if (this.offset + n > this.source.size) this.fail("file ends inside the header");
    this.bufferStart = this.offset + n;
    this.pos = 0;
    this.end = 0;
  }

  u8(): number {
    this.ensure(1);
    return this.buffer[this.pos++]!;
  }
  u32(): number {
    this.ensure(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.ensure(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** a u64 used as a count or size: must fit a JS number */
  size(what: string): number {
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} ${v} is too large`);
    return Number(v);
  }

  string(): string {
    const length = this.size("string length");
    if (length > this.source.size - this.offset) this.fail("file ends inside the header");
    this.ensure(length);
    const s = this.decoder.decode(this.buffer.subarray(this.pos, this.pos + length));
    this.pos += length;
    return s;
  }

  skipString(): void {
    this.skip(this.size("string length"));
  }

  scalar(type: GgufValueType): GgufKv {
    switch (type) {
      case GgufValueType.UINT8:
      case GgufValueType.INT8:
      case GgufValueType.BOOL: {
        this.ensure(1);
        const v = type === GgufValueType.INT8 ? this.view.getInt8(this.pos) : this.view.getUint8(this.pos);
        this.pos += 1;
        return type === GgufValueType.BOOL ? { type, value: v !== 0 } : { type, value: v };
      }
      case GgufValueType.UINT16:
      case GgufValueType.INT16: {
        this.ensure(2);
        const v = type === GgufValueType.INT16 ? this.view.getInt16(this.pos, true) : this.view.getUint16(this.pos, true);
        this.pos += 2;
        return { type, value: v };
      }
      case GgufValueType.UINT32:
      case GgufValueType.INT32:
      case GgufValueType.FLOAT32: {
        this.ensure(4);
        const v =
          type === GgufValueType.UINT32
            ? this.view.getUint32(this.pos, true)
            : type === GgufValueType.INT32
              ? this.view.getInt32(this.pos, true)
              : this.view.getFloat32(this.pos, true);
        this.pos += 4;
        return { type, value: v };
      }
      case GgufValueType.UINT64:
      case GgufValueType.INT64: {
        this.ensure(8);
        const v = type === GgufValueType.INT64 ? this.view.getBigInt64(this.pos, true) : this.view.getBigUint64(this.pos, true);
        this.pos += 8;
        return { type, value: v };
      }
      case GgufValueType.FLOAT64: {
        this.ensure(8);
        const v = this.view.getFloat64(this.pos, true);
        this.pos += 8;
        return { type, value: v };
      }
      case GgufValueType.STRING:
        return { type, value: this.string() };
      case GgufValueType.ARRAY:
        return this.array(Infinity);
      default:
        return this.fail(`unknown value type ${type}`);
    }
  }

  array(maxLength: number): GgufArray {
    const itemType = this.u32() as GgufValueType;
    const length = this.size("array length");
    const width = FIXED_WIDTH[itemType];
    if (width === undefined && itemType !== GgufValueType.STRING && itemType !== GgufValueType.ARRAY) {
      this.fail(`unknown array item type ${itemType}`);
    }
    // every item takes at least this many bytes, so a corrupt length fails here instead of allocating
    const minWidth = width ?? (itemType === GgufValueType.STRING ? 8 : 12);
    if (length * minWidth > this.source.size - this.offset) this.fail("file ends inside the header");
    if (length > maxLength) {
      this.skipArrayItems(itemType, length);
      return { type: GgufValueType.ARRAY, itemType, length, value: null };
    }
    return { type: GgufValueType.ARRAY, itemType, length, value: this.arrayItems(itemType, length, maxLength) };
  }

  private arrayItems(itemType: GgufValueType, length: number, maxLength: number): GgufArrayItems {
    if (itemType === GgufValueType.STRING) {
      const items = new Array<string>(length);
      for (let i = 0; i < length; i++) items[i] = this.string();
      return items;
    }
    if (itemType === GgufValueType.ARRAY) {
      const items = new Array<GgufArray>(length);
      for (let i = 0; i < length; i++) items[i] = this.array(maxLength);
      return items;
    }
    const width = FIXED_WIDTH[itemType]!;
    const byteLength = length * width;
    this.ensure(byteLength);
    // slice() copies into a fresh, aligned ArrayBuffer that the typed array can view directly
    const bytes = this.buffer.slice(this.pos, this.pos + byteLength);
    this.pos += byteLength;
    switch (itemType) {
      case GgufValueType.UINT8:
        return bytes;
      case GgufValueType.INT8:
        return new Int8Array(bytes.buffer);
      case GgufValueType.UINT16:
        return new Uint16Array(bytes.buffer);
      case GgufValueType.INT16:
        return new Int16Array(bytes.buffer);
      case GgufValueType.UINT32:
        return new Uint32Array(bytes.buffer);
      case GgufValueType.INT32:
        return new Int32Array(bytes.buffer);
      case GgufValueType.FLOAT32:
        return new Float32Array(bytes.buffer);
      case GgufValueType.FLOAT64:
        return new Float64Array(bytes.buffer);
      case GgufValueType.UINT64:
        return new BigUint64Array(bytes.buffer);
      case GgufValueType.INT64:
        return new BigInt64Array(bytes.buffer);
      case GgufValueType.BOOL:
        return Array.from(bytes, (b) => b !== 0);
      default:
        return this.fail(`unknown array item type ${itemType}`);
    }
  }

  private skipArrayItems(itemType: GgufValueType, length: number): void {
    const width = FIXED_WIDTH[itemType];
    if (width !== undefined) return this.skip(length * width);
    for (let i = 0; i < length; i++) {
      if (itemType === GgufValueType.STRING) this.skipString();
      else this.skipArrayItems(this.u32() as GgufValueType, this.size("array length"));
    }
  }
}

const FIXED_WIDTH: Partial<Record<GgufValueType, number>> = {
  [GgufValueType.UINT8]: 1,
  [GgufValueType.INT8]: 1,
  [GgufValueType.BOOL]: 1,
  [GgufValueType.UINT16]: 2,
  [GgufValueType.INT16]: 2,
  [GgufValueType.UINT32]: 4,
  [GgufValueType.INT32]: 4,
  [GgufValueType.FLOAT32]: 4,
  [GgufValueType.UINT64]: 8,
  [GgufValueType.INT64]: 8,
  [GgufValueType.FLOAT64]: 8,
};

function parseHeader(source: ByteSource, label: string, options: ReadGgufOptions): GgufHeader {
  const fail = (reason: string): never => {
    throw new GgufReadError(label, reason);
  };
  const cursor = new Cursor(source, fail);
  if (source.size < 4 || cursor.u32() !== GGUF_MAGIC) fail("bad magic");
  const version = cursor.u32();
  // v2 and v3 share the little-endian layout; v1 used 32-bit counts
  if (version !== 2 && version !== 3) fail(`unsupported version ${version}`);
  const tensorCount = cursor.size("tensor count");
  const kvCount = cursor.size("metadata count");

  const maxArrayLength = options.maxArrayLength ?? Infinity;
  const metadata: GgufMetadata = new Map();
  for (let i = 0; i < kvCount; i++) {
    const key = cursor.string();
    const type = cursor.u32() as GgufValueType;
    const kv = type === GgufValueType.ARRAY ? cursor.array(maxArrayLength) : cursor.scalar(type);
    if (metadata.has(key)) fail(`duplicate key "${key}"`);
    metadata.set(key, kv);
  }

  let alignment = GGUF_DEFAULT_ALIGNMENT;
  const alignmentKv = metadata.get("general.alignment");
  if (alignmentKv !== undefined) {
    if (alignmentKv.type !== GgufValueType.UINT32) fail(`"general.alignment" must be a uint32`);
    alignment = alignmentKv.value as number;
    if (alignment === 0 || (alignment & (alignment - 1)) !== 0) fail(`alignment ${alignment} is not a power of two`);
  }

  const infos: Omit<GgufTensorInfo, "fileOffset">[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = cursor.string();
    const dims = cursor.u32();
    if (dims < 1 || dims > MAX_TENSOR_DIMS) fail(`tensor "${name}" has ${dims} dimensions`);
    const shape: number[] = [];
    for (let d = 0; d < dims; d++) shape.push(cursor.size(`tensor "${name}" dimension`));
    const type = cursor.u32();
    if (!isGgmlType(type)) fail(`tensor "${name}" has unknown type ${type}`);
    const offset = cursor.size(`tensor "${name}" offset`);
    if (offset % alignment !== 0) fail(`tensor "${name}" offset ${offset} is not aligned to ${alignment}`);
    let byteSize = 0;
    try {
      byteSize = ggmlTensorByteSize(type as never, shape);
    } catch {
      fail(`tensor "${name}" shape [${shape.join(", ")}] does not fit type ${ggmlTypeName(type as never)}`);
    }
    infos.push({ name, shape, type: type as never, offset, byteSize });
  }

  const dataOffset = Math.ceil(cursor.offset / alignment) * alignment;
  const tensors = infos.map((t) => ({ ...t, fileOffset: dataOffset + t.offset }));
  if (!options.allowTruncatedData) {
    for (const t of tensors) {
      if (t.fileOffset + t.byteSize > source.size) fail(`data of tensor "${t.name}" extends past the end of the file`);
    }
  }
  return { version, metadata, tensors, alignment, dataOffset };
}

/** Reads the header of a GGUF file; tensor data is never loaded, so multi-GB files are fine. */
export function readGgufHeaderSync(path: string, options: ReadGgufOptions = {}): GgufHeader {
  let fd: number;
  try {
    fd = openRegularFileSync(path);
  } catch (error) {
    if (error instanceof NotRegularFileError) throw new GgufReadError(path, `it is ${error.kind}, not a regular file`);
    throw new GgufReadError(path, (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(error));
  }
  try {
    return parseHeader(fileSource(fd), path, options);
  } finally {
    closeSync(fd);
  }
}

/** Same as `readGgufHeaderSync` (reads are few and large: 1 MiB chunks), as a promise for async callers. */
export async function readGgufHeader(path: string, options: ReadGgufOptions = {}): Promise<GgufHeader> {
  return readGgufHeaderSync(path, options);
}

/** Reads a GGUF header from bytes already in memory (e.g. the start of a blob being downloaded). */
export function parseGgufHeader(bytes: Uint8Array, label = "<memory>", options: ReadGgufOptions = {}): GgufHeader {
  return parseHeader(bytesSource(bytes), label, { allowTruncatedData: true, ...options });
}

/** Reads the raw bytes of one tensor. */
export function readGgufTensorBytes(path: string, tensor: GgufTensorInfo): Uint8Array {
  const fd = openRegularFileSync(path);
  try {
    const bytes = new Uint8Array(tensor.byteSize);
    let done = 0;
    while (done < bytes.byteLength) {
      const got = readSync(fd, bytes, done, bytes.byteLength - done, tensor.fileOffset + done);
      if (got <= 0) throw new GgufReadError(path, `data of tensor "${tensor.name}" extends past the end of the file`);
      done += got;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}
