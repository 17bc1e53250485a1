// Quantizes a GGUF file in a child process (`llamux __quantize`, src/store/quantize-main.ts): llama.cpp's
// quantizer blocks the thread that calls it and aborts the process on some failures, so neither the
// server nor `create` runs it in-process. Its per-tensor log lines ("[  12/ 201] blk.1.attn_k.weight …")
// become progress events; cancelling the signal kills the child.
import { llamuxCommand } from "../binary/self.ts";
import { quantizationTypes, type QuantizationType } from "../../ffi/quantize.ts";
import type { ProgressHandler } from "./pull-progress.ts";

const TENSOR_LINE = /\[\s*(\d+)\s*\/\s*(\d+)\s*\]/;

/** The quantizer's name for a type as Ollama's clients write it (`q4_K_M`, `Q8_0`), or undefined. */
export function quantizationType(name: string): QuantizationType | undefined {
  return (Object.keys(quantizationTypes) as QuantizationType[]).find((type) => type.toLowerCase() === name.toLowerCase());
}

export const supportedQuantizations = Object.keys(quantizationTypes).filter((type) => type !== "F16");

export async function quantizeInChild(
  input: string, output: string, type: QuantizationType, signal?: AbortSignal, onProgress?: ProgressHandler,
): Promise<void> {
  const child = Bun.spawn([...llamuxCommand(), "__quantize", input, output, type], {
    stdout: "ignore", stderr: "pipe", env: { ...process.env, LLAMUX_LOG_LEVEL: "debug" },
  });
  const kill = () => child.kill();
  signal?.addEventListener("abort", kill, { once: true });
  try {
    const status = `quantizing to ${type}`;
    const errors: string[] = [];
    let pending = "";
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        const match = TENSOR_LINE.exec(line);
        if (match) onProgress?.({ status, total: Number(match[2]), completed: Number(match[1]) });
        else if (/ERROR|error:|Cannot/.test(line)) errors.push(line.trim());
      }
    }
    if (pending.trim()) errors.push(pending.trim());
    const code = await child.exited;
    if (signal?.aborted) throw new Error("quantization cancelled");
    if (code !== 0) throw new Error(`Cannot quantize to ${type}: the quantizer exited with code ${code}${errors.length ? ` (${errors.slice(-3).join("; ")})` : ""}`);
  } finally {
    signal?.removeEventListener("abort", kill);
  }
}
