// GGUF format constants and value types (see llama.cpp gguf-py/gguf/constants.py and ggml/include/ggml.h).

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

export enum GgufValueType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

export type GgufScalarType = Exclude<GgufValueType, GgufValueType.ARRAY>;
export type GgufNumberType =
  | GgufValueType.UINT8
  | GgufValueType.INT8
  | GgufValueType.UINT16
  | GgufValueType.INT16
  | GgufValueType.UINT32
  | GgufValueType.INT32
  | GgufValueType.FLOAT32
  | GgufValueType.FLOAT64;
export type GgufBigIntType = GgufValueType.UINT64 | GgufValueType.INT64;

/** Array items: typed arrays keep the numeric width; 64-bit integers are bigint arrays. */
export type GgufArrayItems =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigUint64Array
  | BigInt64Array
  | boolean[]
  | string[]
  | GgufArray[];

export interface GgufArray {
  type: GgufValueType.ARRAY;
  itemType: GgufValueType;
  length: number;
  /** null when the reader skipped a long array (see `ReadGgufOptions.maxArrayLength`) */
  value: GgufArrayItems | null;
}

/** One typed metadata value. The type is kept so a file can be rewritten exactly. */
export type GgufKv =
  | { type: GgufNumberType; value: number }
  | { type: GgufBigIntType; value: bigint }
  | { type: GgufValueType.BOOL; value: boolean }
  | { type: GgufValueType.STRING; value: string }
  | GgufArray;

export type GgufMetadata = Map<string, GgufKv>;

export enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
}

const QK_K = 256;

/** [elements per block, bytes per block] for every ggml type a GGUF file may hold. */
export const GGML_BLOCK_LAYOUT: Readonly<Record<GgmlType, readonly [number, number]>> = {
  [GgmlType.F32]: [1, 4],
  [GgmlType.F16]: [1, 2],
  [GgmlType.Q4_0]: [32, 2 + 16],
  [GgmlType.Q4_1]: [32, 2 + 2 + 16],
  [GgmlType.Q5_0]: [32, 2 + 4 + 16],
  [GgmlType.Q5_1]: [32, 2 + 2 + 4 + 16],
  [GgmlType.Q8_0]: [32, 2 + 32],
  [GgmlType.Q8_1]: [32, 2 + 2 + 32],
  [GgmlType.Q2_K]: [QK_K, 2 + 2 + QK_K / 16 + QK_K / 4],
  [GgmlType.Q3_K]: [QK_K, 2 + QK_K / 4 + QK_K / 8 + 12],
  [GgmlType.Q4_K]: [QK_K, 2 + 2 + QK_K / 2 + 12],
  [GgmlType.Q5_K]: [QK_K, 2 + 2 + QK_K / 2 + QK_K / 8 + 12],
  [GgmlType.Q6_K]: [QK_K, 2 + QK_K / 2 + QK_K / 4 + QK_K / 16],
  [GgmlType.Q8_K]: [QK_K, 4 + QK_K + QK_K / 8],
  [GgmlType.IQ2_XXS]: [QK_K, 2 + QK_K / 4],
  [GgmlType.IQ2_XS]: [QK_K, 2 + QK_K / 4 + QK_K / 32],
  [GgmlType.IQ3_XXS]: [QK_K, 2 + QK_K / 4 + QK_K / 8],
  [GgmlType.IQ1_S]: [QK_K, 2 + QK_K / 8 + QK_K / 16],
  [GgmlType.IQ4_NL]: [32, 2 + 16],
  [GgmlType.IQ3_S]: [QK_K, 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4],
  [GgmlType.IQ2_S]: [QK_K, 2 + QK_K / 4 + QK_K / 16],
  [GgmlType.IQ4_XS]: [QK_K, 2 + 2 + QK_K / 2 + QK_K / 64],
  [GgmlType.I8]: [1, 1],
  [GgmlType.I16]: [1, 2],
  [GgmlType.I32]: [1, 4],
  [GgmlType.I64]: [1, 8],
  [GgmlType.F64]: [1, 8],
  [GgmlType.IQ1_M]: [QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32],
  [GgmlType.BF16]: [1, 2],
  [GgmlType.TQ1_0]: [QK_K, 2 + 4 * 13],
  [GgmlType.TQ2_0]: [QK_K, 2 + 64],
  [GgmlType.MXFP4]: [32, 1 + 16],
  [GgmlType.NVFP4]: [64, 4 + 32],
  [GgmlType.Q1_0]: [128, 2 + 16],
  [GgmlType.Q2_0]: [64, 2 + 16],
};

export function isGgmlType(value: number): value is GgmlType {
  return Object.hasOwn(GGML_BLOCK_LAYOUT, value);
}

export function ggmlTypeName(type: GgmlType): string {
  return GgmlType[type] ?? `type ${type}`;
}

/** Bytes taken by a tensor of `type` with dimensions `shape` (ggml order: shape[0] is the contiguous row). */
export function ggmlTensorByteSize(type: GgmlType, shape: readonly number[]): number {
  const [blockSize, bytesPerBlock] = GGML_BLOCK_LAYOUT[type];
  const rowLength = shape[0] ?? 1;
  if (rowLength % blockSize !== 0) {
    throw new Error(`Tensor row length ${rowLength} is not a multiple of the ${ggmlTypeName(type)} block size ${blockSize}`);
  }
  let rows = 1;
  for (let i = 1; i < shape.length; i++) rows *= shape[i]!;
  return (rowLength / blockSize) * bytesPerBlock * rows;
}

export interface GgufTensorInfo {
  name: string;
  /** ggml order: shape[0] is the number of elements in one row */
  shape: number[];
  type: GgmlType;
  /** offset from the start of the tensor data section */
  offset: number;
  /** offset from the start of the file */
  fileOffset: number;
  byteSize: number;
}

export interface GgufHeader {
  version: number;
  metadata: GgufMetadata;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** where the tensor data section starts in the file */
  dataOffset: number;
}
