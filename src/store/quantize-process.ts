// Quantizes a GGUF file in a child process (`llamux __quantize`), so a server keeps answering while
// llama.cpp's quantizer runs; cancelling the signal kills the child.
import { join } from "node:path";
import { quantizationTypes, type QuantizationType } from "../../ffi/quantize.ts";

function childCommand(): string[] {
  const compiled = import.meta.path.startsWith("/$bunfs/");
  return compiled ? [process.execPath, "__quantize"] : [process.execPath, join(import.meta.dir, "quantize-main.ts")];
}

/** The quantizer's name for a type as Ollama's clients write it (`q4_K_M`, `Q8_0`), or undefined. */
export function quantizationType(name: string): QuantizationType | undefined {
  return (Object.keys(quantizationTypes) as QuantizationType[]).find((type) => type.toLowerCase() === name.toLowerCase());
}

export const supportedQuantizations = Object.keys(quantizationTypes).filter((type) => type !== "F16");

export async function quantizeInChild(input: string, output: string, type: QuantizationType, signal?: AbortSignal): Promise<void> {
  const child = Bun.spawn([...childCommand(), input, output, type], { stdout: "ignore", stderr: "pipe", env: process.env });
  const kill = () => child.kill();
  signal?.addEventListener("abort", kill, { once: true });
  try {
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    if (signal?.aborted) throw new Error("quantization cancelled");
    if (code !== 0) throw new Error(stderr.trim().split("\n").at(-1) || `the quantizer exited with code ${code}`);
  } finally {
    signal?.removeEventListener("abort", kill);
  }
}
