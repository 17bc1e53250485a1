// Deterministic random tensors, streamed in chunks so a 2.5 GB model never sits in memory.
import { GgmlType, type GgufTensorInput, type GgufTensorSink, float32ToFloat16Bits } from "../../src/store/gguf.ts";

export const WEIGHT_STD = 0.02;

const CHUNK_ELEMENTS = 1 << 22;

/** Acklam's rational approximation of the inverse normal CDF (relative error < 1.2e-9). */
function inverseNormal(p: number): number {
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - low) return -inverseNormal(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

// 65536 quantiles of N(0, std): a random 16-bit index then picks a normally distributed value with one lookup
const normalTables = new Map<number, { f32: Float32Array; f16: Uint16Array }>();
function normalTable(std: number) {
  let table = normalTables.get(std);
  if (!table) {
    const f32 = new Float32Array(65536);
    const f16 = new Uint16Array(65536);
    for (let i = 0; i < 65536; i++) {
      f32[i] = std * inverseNormal((i + 0.5) / 65536);
      f16[i] = float32ToFloat16Bits(f32[i]!);
    }
    table = { f32, f16 };
    normalTables.set(std, table);
  }
  return table;
}

/** FNV-1a, used to derive a per-tensor seed so each tensor is reproducible on its own. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Streams N(0, std) values as F16 or F32, xorshift32 driven (cheap, and quality does not matter here). */
function writeNormal(sink: GgufTensorSink, count: number, type: GgmlType.F16 | GgmlType.F32, std: number, seed: number): void {
  const table = normalTable(std);
  let x = seed >>> 0 || 1;
  const chunkElements = Math.min(count, CHUNK_ELEMENTS);
  if (type === GgmlType.F16) {
    const f16 = table.f16;
    const out = new Uint16Array(chunkElements + 1); // +1: pairs are written two at a time
    for (let done = 0; done < count; ) {
      const n = Math.min(chunkElements, count - done);
      for (let i = 0; i < n; i += 2) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        out[i] = f16[x & 0xffff]!;
        out[i + 1] = f16[x >>> 16]!;
      }
      sink.write(out.subarray(0, n));
      done += n;
    }
  } else {
    const f32 = table.f32;
    const out = new Float32Array(chunkElements + 1);
    for (let done = 0; done < count; ) {
      const n = Math.min(chunkElements, count - done);
      for (let i = 0; i < n; i += 2) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        out[i] = f32[x & 0xffff]!;
        out[i + 1] = f32[x >>> 16]!;
      }
      sink.write(out.subarray(0, n));
      done += n;
    }
  }
}

export interface RandomTensorOptions {
  type?: GgmlType.F16 | GgmlType.F32;
  std?: number;
}

/** A tensor of seeded normal values: the seed comes from `seedKey` (model name) and the tensor name. */
export function randomTensor(seedKey: string, name: string, shape: number[], options: RandomTensorOptions = {}): GgufTensorInput {
  const type = options.type ?? GgmlType.F16;
  const std = options.std ?? WEIGHT_STD;
  return {
    name,
    shape,
    type,
    write: (sink) => writeNormal(sink, elementCount(shape), type, std, seedOf(`${seedKey}/${name}`)),
  };
}

/** An F32 tensor filled with one value (norm weights are 1, biases 0). */
export function constantTensor(name: string, shape: number[], value: number): GgufTensorInput {
  return { name, shape, type: GgmlType.F32, data: new Float32Array(elementCount(shape)).fill(value) };
}

/**
 * The tensor constructors a generator uses, seeded by its model name: random F16 (or F32) weights, and
 * F32 constants for norms (ones) and biases (zeros, of a length or a shape).
 */
export function weightMakers(seedKey: string) {
  return {
    random: (tensorName: string, dims: number[], type: GgmlType.F16 | GgmlType.F32 = GgmlType.F16) => randomTensor(seedKey, tensorName, dims, { type }),
    ones: (tensorName: string, n: number) => constantTensor(tensorName, [n], 1),
    zeros: (tensorName: string, shape: number | number[]) => constantTensor(tensorName, typeof shape === "number" ? [shape] : shape, 0),
  };
}
