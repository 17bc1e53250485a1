// Quantizes a GGUF file in a child process (`llamux __quantize`, src/store/quantize-main.ts): llama.cpp's
// quantizer blocks the thread that calls it and aborts the process on some failures, so neither the
// server nor `create` runs it in-process. Cancelling the signal kills the child.
//
// Progress is the output file's size against the size the target type should give: the quantizer has
// no progress callback, writes its output front to back, and its log (a threadsafe callback) reaches
// JavaScript only after the call returns, so per-tensor log lines cannot show progress.
import { statSync } from "node:fs";
import { llamuxCommand } from "../binary/self.ts";
import { quantizationTypes, type QuantizationType } from "../../ffi/quantize.ts";
import { readGgufHeaderSync } from "./gguf.ts";
import type { ProgressHandler } from "./pull-progress.ts";

const PROGRESS_POLL_MS = 200;
/** Bits per weight of each target type (K-quant mixes as llama.cpp reports them), for the progress estimate. */
const BITS_PER_WEIGHT: Record<string, number> = { F16: 16, Q4_0: 4.5, Q8_0: 8.5, Q4_K_M: 4.85, Q5_K_M: 5.69, Q6_K: 6.56 };

/** The quantizer's name for a type as Ollama's clients write it (`q4_K_M`, `Q8_0`), or undefined. */
export function quantizationType(name: string): QuantizationType | undefined {
  return (Object.keys(quantizationTypes) as QuantizationType[]).find((type) => type.toLowerCase() === name.toLowerCase());
}

export const supportedQuantizations = Object.keys(quantizationTypes).filter((type) => type !== "F16");

/** About how large the output will be: matrices at the target type, vectors kept as they are. */
function expectedOutputSize(input: string, type: QuantizationType): number {
  let total = 0;
  for (const tensor of readGgufHeaderSync(input, { maxArrayLength: 0 }).tensors) {
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

/** Polls the output's size; the estimate misses tensors llama.cpp keeps at a higher precision, so it grows when passed. */
function watchOutput(input: string, output: string, type: QuantizationType, onProgress: ProgressHandler): () => void {
  const status = `quantizing to ${type}`;
  let total = expectedOutputSize(input, type);
  const timer = setInterval(() => {
    const written = sizeOf(output);
    if (written >= total) total = Math.round(written * 1.1);
    onProgress({ status, total, completed: written });
  }, PROGRESS_POLL_MS);
  return () => {
    clearInterval(timer);
    const written = sizeOf(output);
    if (written > 0) onProgress({ status, total: written, completed: written });
  };
}

export async function quantizeInChild(
  input: string, output: string, type: QuantizationType, signal?: AbortSignal, onProgress?: ProgressHandler,
): Promise<void> {
  const child = Bun.spawn([...llamuxCommand(), "__quantize", input, output, type], { stdout: "ignore", stderr: "pipe", env: process.env });
  const kill = () => child.kill();
  signal?.addEventListener("abort", kill, { once: true });
  const stopWatching = onProgress ? watchOutput(input, output, type, onProgress) : undefined;
  try {
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    if (signal?.aborted) throw new Error("quantization cancelled");
    const reason = stderr.trim().split("\n").filter(Boolean).slice(-3).join("; ");
    if (code !== 0) throw new Error(`Cannot quantize to ${type}: the quantizer exited with code ${code}${reason ? ` (${reason})` : ""}`);
  } finally {
    stopWatching?.();
    signal?.removeEventListener("abort", kill);
  }
}
