// Quantizes a GGUF in a child process (`llamux __quantize`) and turns the quantizer's per-tensor log
// lines ("[  12/ 201] blk.1.attn_k.weight ...") into progress events.
import { llamuxCommand } from "../binary/self.ts";
import { quantizationTypes } from "../../ffi/quantize.ts";
import type { Quantizer } from "./create-model.ts";

const TENSOR_LINE = /\[\s*(\d+)\s*\/\s*(\d+)\s*\]/;

/** The quantization types `create -q` accepts, in their canonical spelling (`q4_k_m` → `Q4_K_M`). */
export function quantizationType(name: string): string {
  const upper = name.toUpperCase();
  if (!Object.hasOwn(quantizationTypes, upper)) {
    throw new RangeError(`Cannot quantize to "${name}": unsupported type (use ${Object.keys(quantizationTypes).join(", ")})`);
  }
  return upper;
}

export const quantizeInChildProcess: Quantizer = async (input, output, type, onProgress) => {
  const child = Bun.spawn([...llamuxCommand(), "__quantize", input, output, quantizationType(type)], {
    stdout: "ignore", stderr: "pipe", env: { ...process.env, LLAMUX_LOG_LEVEL: "debug" },
  });
  const status = `quantizing to ${type.toUpperCase()}`;
  const errors: string[] = [];
  let pending = "";
  for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      const match = TENSOR_LINE.exec(line);
      if (match) onProgress?.({ status, total: Number(match[2]), completed: Number(match[1]) });
      else if (/ERROR|error:/.test(line)) errors.push(line.trim());
    }
  }
  const code = await child.exited;
  if (code !== 0) throw new Error(`Cannot quantize to ${type}: the quantizer exited with code ${code}${errors.length ? ` (${errors.slice(-3).join("; ")})` : ""}`);
};
