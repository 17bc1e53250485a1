// vLLM's prefix-cache block hashes with its "sha256_cbor" algorithm, so that a router which hashes
// prompts as vLLM does finds llamux's blocks: each full block of KV_BLOCK_TOKENS tokens hashes
// sha256(canonical CBOR of [parent hash, block tokens, extra keys]), the first block's parent being
// NONE_HASH = sha256(CBOR of the seed string). The seed is PYTHONHASHSEED where set, as in vLLM (set the
// same value on every replica and router); else vLLM's fixed default for cryptographic hashes. Events
// carry the low 64 bits of a digest, read big-endian (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES, its default).
import { createHash } from "node:crypto";
import { ByteWriter } from "./msgpack.ts";

export const DEFAULT_HASH_SEED = "vllm-none-hash";

/** NONE_HASH for `seed`: the parent of every chain's first block. */
export function noneHash(seed: string): Uint8Array {
  const writer = new ByteWriter();
  cborText(writer, seed);
  return sha256(writer.bytes());
}

function cborText(writer: ByteWriter, value: string): void {
  const text = new TextEncoder().encode(value);
  cborHead(writer, 3, text.length);
  writer.raw(text);
}

/**
 * The hash of one full block after `parent`. Extra keys: a per-request LoRA adapter's name, as vLLM adds
 * it (llamux hashes no images or salts in); none for the base model.
 */
export function blockHash(parent: Uint8Array, tokens: ArrayLike<number>, extraKeys?: readonly string[]): Uint8Array {
  return sha256(blockHashInput(parent, tokens, extraKeys));
}

/** cbor2.dumps((parent, tuple(tokens), extra_keys), canonical=True): extra_keys a tuple of strings, or None. */
export function blockHashInput(parent: Uint8Array, tokens: ArrayLike<number>, extraKeys?: readonly string[]): Uint8Array {
  const writer = new ByteWriter();
  cborHead(writer, 4, 3);
  cborHead(writer, 2, parent.length);
  writer.raw(parent);
  cborHead(writer, 4, tokens.length);
  for (let i = 0; i < tokens.length; i++) cborHead(writer, 0, tokens[i]!);
  if (!extraKeys?.length) {
    writer.u8(0xf6);
    return writer.bytes();
  }
  cborHead(writer, 4, extraKeys.length);
  for (const key of extraKeys) cborText(writer, key);
  return writer.bytes();
}

/** The block hash as an event carries it: the digest's last 8 bytes as an unsigned big-endian integer. */
export function externalBlockHash(digest: Uint8Array): bigint {
  return new DataView(digest.buffer, digest.byteOffset + digest.length - 8, 8).getBigUint64(0);
}

/** A CBOR head in its shortest form (canonical): major type and argument. */
function cborHead(writer: ByteWriter, major: number, argument: number): void {
  if (!Number.isInteger(argument) || argument < 0) throw new RangeError(`Cannot encode ${argument} as a CBOR argument`);
  const type = major << 5;
  if (argument < 24) return writer.u8(type | argument);
  if (argument <= 0xff) return writer.u8(type | 24, argument);
  if (argument <= 0xffff) return (writer.u8(type | 25), writer.u16(argument));
  if (argument <= 0xffffffff) return (writer.u8(type | 26), writer.u32(argument));
  writer.u8(type | 27);
  writer.u64(BigInt(argument));
}

function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(bytes).digest());
}
