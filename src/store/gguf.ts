// GGUF reading and writing: the one import for the rest of llamux.
import { GgufValueType, type GgufHeader, type GgufKv, type GgufMetadata } from "./gguf-types.ts";

export * from "./gguf-types.ts";
export * from "./gguf-reader.ts";
export * from "./gguf-writer.ts";
export * from "./gguf-f16.ts";

/** A metadata value as plain JS: numbers, bigints, booleans, strings, or arrays of those (null if skipped). */
export type GgufPlainValue = number | bigint | boolean | string | null | GgufPlainValue[];

export function ggufPlainValue(kv: GgufKv): GgufPlainValue {
  if (kv.type !== GgufValueType.ARRAY) return kv.value;
  if (kv.value === null) return null;
  if (kv.itemType === GgufValueType.ARRAY) return (kv.value as GgufKv[]).map(ggufPlainValue);
  return Array.from(kv.value as ArrayLike<number | bigint | boolean | string>);
}

function metadataOf(source: GgufHeader | GgufMetadata): GgufMetadata {
  return source instanceof Map ? source : source.metadata;
}

/** A string value, or undefined when the key is missing or not a string. */
export function ggufString(source: GgufHeader | GgufMetadata, key: string): string | undefined {
  const kv = metadataOf(source).get(key);
  return kv?.type === GgufValueType.STRING ? kv.value : undefined;
}

/** A numeric value of any width (64-bit integers converted to number), or undefined. */
export function ggufNumber(source: GgufHeader | GgufMetadata, key: string): number | undefined {
  const kv = metadataOf(source).get(key);
  if (kv === undefined || kv.type === GgufValueType.ARRAY || kv.type === GgufValueType.STRING || kv.type === GgufValueType.BOOL) {
    return undefined;
  }
  return Number(kv.value);
}

export function ggufBool(source: GgufHeader | GgufMetadata, key: string): boolean | undefined {
  const kv = metadataOf(source).get(key);
  return kv?.type === GgufValueType.BOOL ? kv.value : undefined;
}

/** The architecture-prefixed value, e.g. ggufArchKey(header, "context_length") reads "llama.context_length". */
export function ggufArchKey(header: GgufHeader | GgufMetadata, suffix: string): string {
  return `${ggufString(header, "general.architecture") ?? "unknown"}.${suffix}`;
}

/** Number of parameters (elements of all tensors), as llama.cpp reports it. */
export function ggufParameterCount(header: GgufHeader): number {
  let total = 0;
  for (const t of header.tensors) total += t.shape.reduce((a, b) => a * b, 1);
  return total;
}
