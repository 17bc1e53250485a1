// Quantizes a GGUF in a child process (`llamux __quantize`), so an abort inside llama.cpp cannot take
// `create` down. The quantizer offers no progress callback and writes its output front to back, so
// progress is the output file's size against the size the target type should give.
import { statSync } from "node:fs";
import { llamuxCommand } from "../binary/self.ts";
import { quantizationTypes } from "../../ffi/quantize.ts";
import type { Quantizer } from "./create-model.ts";
import { readGgufHeaderSync } from "./gguf.ts";

const POLL_MS = 200;

/** Bits per weight of each target type (K-quant mixes as llama.cpp reports them). */
const BITS_PER_WEIGHT: Record<string, number> = { F16: 16, Q4_0: 4.5, Q8_0: 8.5, Q4_K_M: 4.85, Q5_K_M: 5.69, Q6_K: 6.56 };

/** The quantization types `create -q` accepts, in their canonical spelling (`q4_k_m` → `Q4_K_M`). */
export function quantizationType(name: string): string {
  const upper = name.toUpperCase();
  if (!Object.hasOwn(quantizationTypes, upper)) {
    throw new RangeError(`Cannot quantize to "${name}": unsupported type (use ${Object.keys(quantizationTypes).join(", ")})`);
  }
  return upper;
}

/** About how large the output will be: matrices at the target type, vectors kept as they are. */
function expectedOutputSize(input: string, type: string): number {
  const header = readGgufHeaderSync(input, { maxArrayLength: 0 });
  let total = 0;
  for (const tensor of header.tensors) {
    const elements = tensor.shape.reduce((a, b) => a * b, 1);
    total += tensor.shape.length >= 2 ? (elements * (BITS_PER_WEIGHT[type] ?? 8)) / 8 : tensor.byteSize;
  }
  return Math.max(1, Math.round(total));
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export const quantizeInChildProcess: Quantizer = async (input, output, type, onProgress) => {
  const target = quantizationType(type);
  const child = Bun.spawn([...llamuxCommand(), "__quantize", input, output, target], { stdout: "ignore", stderr: "pipe" });
  const status = `quantizing to ${target}`;
  // the estimate misses tensors llama.cpp keeps at a higher precision: it grows when the output passes it
  let total = expectedOutputSize(input, target);
  const timer = setInterval(() => {
    const written = sizeOf(output);
    if (written >= total) total = Math.round(written * 1.1);
    onProgress?.({ status, total, completed: written });
  }, POLL_MS);
  const stderr = new Response(child.stderr).text();
  const code = await child.exited;
  clearInterval(timer);
  if (code !== 0) {
    const reason = (await stderr).trim().split("\n").slice(-3).join("; ");
    throw new Error(`Cannot quantize to ${target}: the quantizer exited with code ${code}${reason ? ` (${reason})` : ""}`);
  }
  const written = sizeOf(output);
  onProgress?.({ status, total: written, completed: written });
};
