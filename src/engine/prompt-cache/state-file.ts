// One saved sequence state on disk: a header naming the model identity it belongs to, the tokens it
// covers, the state llama.cpp wrote, the logits after its last token (recurrent checkpoints), the marks
// along its tokens (recurrent models: planning/recurrent-marks.ts), and a CRC-32 over all of it. A file is checked whole before any of it reaches llama.cpp: a truncated,
// damaged or foreign file is refused (StateFileError), never restored.
//
//   "LMXSTATE"  u32 version  u32 header length  header (JSON)  tokens (i32 LE)  state  logits (f32 LE)  marks  u32 CRC-32
//
// The header lists each mark's length and size; their states follow the logits in that order.
//
// Files are written to a temporary name and renamed, so a reader never sees half a file, and the CRC is
// computed in slices with a yield between them, so a state of hundreds of MiB does not hold the engine's
// step loop for long.
import { open, rename, rm } from "node:fs/promises";
import type { RecurrentMark } from "../sequence.ts";
import { marksBefore } from "../planning/recurrent-marks.ts";

const MAGIC = new TextEncoder().encode("LMXSTATE");
export const STATE_FILE_VERSION = 1;
const PREFIX_BYTES = MAGIC.length + 8;
/** Headers are a few hundred bytes; anything larger is not one of ours. */
const MAX_HEADER_BYTES = 64 * 1024;
/** CRC slice between yields to the event loop. */
const CRC_SLICE_BYTES = 8 * 1048576;

export interface StateFileHeader {
  /** The identity of the model and settings the state was saved under (state-key.ts). */
  key: string;
  tokenCount: number;
  stateBytes: number;
  logitsCount: number;
  /** The marks along the tokens: the tokens each covers and its state's bytes, in file order. */
  marks?: Array<{ length: number; bytes: number }>;
  session?: string;
  /** ms since the epoch. */
  savedAt: number;
}

export interface SavedState {
  tokens: Int32Array;
  state: Uint8Array;
  logits: Float32Array | undefined;
  session: string | undefined;
  marks?: readonly RecurrentMark[];
}

/** A state file that cannot be used: its path and what is wrong with it. */
export class StateFileError extends Error {
  constructor(readonly path: string, reason: string) {
    super(`Cannot use prompt state file "${path}": ${reason}`);
    this.name = "StateFileError";
  }
}

/** Bytes a file for these parts takes. */
export function stateFileBytes(headerBytes: number, tokenCount: number, stateBytes: number, logitsCount: number, markBytes = 0): number {
  return PREFIX_BYTES + headerBytes + tokenCount * 4 + stateBytes + logitsCount * 4 + markBytes + 4;
}

/** Bytes the marks' states take. */
export function marksBytes(marks: ReadonlyArray<{ bytes: number }> | undefined): number {
  return (marks ?? []).reduce((sum, mark) => sum + mark.bytes, 0);
}

/** Writes the state to `path` (through a temporary file renamed into place). */
export async function writeStateFile(path: string, key: string, saved: SavedState): Promise<number> {
  const marks = marksBefore(saved.marks ?? [], saved.tokens.length);
  const header: StateFileHeader = {
    key, tokenCount: saved.tokens.length, stateBytes: saved.state.byteLength, logitsCount: saved.logits?.length ?? 0,
    ...(marks.length > 0 ? { marks: marks.map((mark) => ({ length: mark.length, bytes: mark.state.byteLength })) } : {}),
    ...(saved.session !== undefined ? { session: saved.session } : {}), savedAt: Date.now(),
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const prefix = new Uint8Array(PREFIX_BYTES);
  prefix.set(MAGIC);
  const view = new DataView(prefix.buffer);
  view.setUint32(MAGIC.length, STATE_FILE_VERSION, true);
  view.setUint32(MAGIC.length + 4, headerBytes.length, true);
  const parts = [prefix, headerBytes, bytesOf(saved.tokens), saved.state, ...(saved.logits ? [bytesOf(saved.logits)] : []), ...marks.map((mark) => mark.state)];
  let crc = 0;
  for (const part of parts) crc = await crc32Sliced(part, crc);
  const trailer = new Uint8Array(4);
  new DataView(trailer.buffer).setUint32(0, crc, true);
  const temp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const file = await open(temp, "w");
  try {
    for (const part of [...parts, trailer]) await file.write(part);
  } catch (error) {
    await file.close();
    await rm(temp, { force: true });
    throw error;
  }
  await file.close();
  await rename(temp, path);
  return stateFileBytes(headerBytes.length, saved.tokens.length, saved.state.byteLength, saved.logits?.length ?? 0, marksBytes(header.marks));
}

/** Reads only the header and tokens of a state file (for the index); throws StateFileError. */
export async function readStateHeader(path: string): Promise<{ header: StateFileHeader; tokens: Int32Array; fileBytes: number }> {
  const file = Bun.file(path);
  const fileBytes = file.size;
  const prefix = new Uint8Array(await file.slice(0, PREFIX_BYTES).arrayBuffer());
  const headerLength = checkPrefix(path, prefix);
  const header = parseHeader(path, new Uint8Array(await file.slice(PREFIX_BYTES, PREFIX_BYTES + headerLength).arrayBuffer()));
  const expected = stateFileBytes(headerLength, header.tokenCount, header.stateBytes, header.logitsCount, marksBytes(header.marks));
  if (fileBytes !== expected) throw new StateFileError(path, `${fileBytes} bytes where its header says ${expected} (truncated or damaged)`);
  const start = PREFIX_BYTES + headerLength;
  const tokenBytes = new Uint8Array(await file.slice(start, start + header.tokenCount * 4).arrayBuffer());
  return { header, tokens: int32sOf(tokenBytes), fileBytes };
}

/** Reads and checks a whole state file saved under `key`; throws StateFileError for anything but an intact file of that key. */
export async function readStateFile(path: string, key: string): Promise<SavedState> {
  const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
  if (bytes.length < PREFIX_BYTES + 4) throw new StateFileError(path, `${bytes.length} bytes is too short`);
  const headerLength = checkPrefix(path, bytes.subarray(0, PREFIX_BYTES));
  const header = parseHeader(path, bytes.subarray(PREFIX_BYTES, PREFIX_BYTES + headerLength));
  if (header.key !== key) throw new StateFileError(path, "it was saved for another model or other settings");
  const expected = stateFileBytes(headerLength, header.tokenCount, header.stateBytes, header.logitsCount, marksBytes(header.marks));
  if (bytes.length !== expected) throw new StateFileError(path, `${bytes.length} bytes where its header says ${expected} (truncated or damaged)`);
  const stored = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true);
  if ((await crc32Sliced(bytes.subarray(0, bytes.length - 4), 0)) !== stored) throw new StateFileError(path, "its checksum does not match (damaged)");
  let offset = PREFIX_BYTES + headerLength;
  const tokens = int32sOf(bytes.subarray(offset, offset + header.tokenCount * 4));
  offset += header.tokenCount * 4;
  const state = bytes.subarray(offset, offset + header.stateBytes);
  offset += header.stateBytes;
  const logits = header.logitsCount > 0 ? new Float32Array(bytes.slice(offset, offset + header.logitsCount * 4).buffer) : undefined;
  offset += header.logitsCount * 4;
  const marks: RecurrentMark[] = [];
  for (const mark of header.marks ?? []) {
    marks.push({ length: mark.length, state: bytes.subarray(offset, offset + mark.bytes) });
    offset += mark.bytes;
  }
  return { tokens, state, logits, session: header.session, ...(marks.length > 0 ? { marks } : {}) };
}

function checkPrefix(path: string, prefix: Uint8Array): number {
  if (prefix.length < PREFIX_BYTES || MAGIC.some((byte, i) => prefix[i] !== byte)) throw new StateFileError(path, "not a llamux prompt state file");
  const view = new DataView(prefix.buffer, prefix.byteOffset, PREFIX_BYTES);
  const version = view.getUint32(MAGIC.length, true);
  if (version !== STATE_FILE_VERSION) throw new StateFileError(path, `format version ${version}, this llamux reads ${STATE_FILE_VERSION}`);
  const headerLength = view.getUint32(MAGIC.length + 4, true);
  if (headerLength === 0 || headerLength > MAX_HEADER_BYTES) throw new StateFileError(path, `a header of ${headerLength} bytes`);
  return headerLength;
}

function parseHeader(path: string, bytes: Uint8Array): StateFileHeader {
  let header: Partial<StateFileHeader>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes)) as Partial<StateFileHeader>;
  } catch {
    throw new StateFileError(path, "its header is not JSON (damaged)");
  }
  const count = (value: unknown) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
  if (typeof header.key !== "string" || !count(header.tokenCount) || !count(header.stateBytes) || !count(header.logitsCount)
    || header.tokenCount === 0 || header.stateBytes === 0 || (header.session !== undefined && typeof header.session !== "string")) {
    throw new StateFileError(path, "its header lacks the key, the token count or the state size");
  }
  if (header.marks !== undefined && !validMarks(header.marks, header.tokenCount!)) throw new StateFileError(path, "its header lists marks that do not fit its tokens");
  return { ...(header as StateFileHeader), savedAt: count(header.savedAt) ? header.savedAt! : 0 };
}

/** Marks as a header lists them: ascending lengths within the tokens, each with a state. */
function validMarks(marks: unknown, tokenCount: number): boolean {
  if (!Array.isArray(marks) || marks.length > tokenCount) return false;
  let previous = 0;
  for (const mark of marks as Array<{ length?: unknown; bytes?: unknown }>) {
    const { length, bytes } = mark ?? {};
    if (typeof length !== "number" || !Number.isSafeInteger(length) || length <= previous || length >= tokenCount) return false;
    if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes <= 0) return false;
    previous = length;
  }
  return true;
}

function bytesOf(array: Int32Array | Float32Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** Little-endian i32s from bytes at any alignment (copied). */
function int32sOf(bytes: Uint8Array): Int32Array {
  return new Int32Array(bytes.slice().buffer);
}

/** CRC-32 of `bytes` continuing `crc`, a slice at a time with a yield between slices. */
async function crc32Sliced(bytes: Uint8Array, crc: number): Promise<number> {
  for (let offset = 0; offset < bytes.length; offset += CRC_SLICE_BYTES) {
    if (offset > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    crc = Bun.hash.crc32(bytes.subarray(offset, offset + CRC_SLICE_BYTES), crc);
  }
  return crc;
}
