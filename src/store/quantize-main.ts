// Entry of a quantization child process (`llamux __quantize IN OUT TYPE`): llama.cpp's quantizer blocks
// the thread that calls it, so the server runs it here, away from its event loop.
import { quantizeModel, quantizationTypes, type QuantizationType } from "../../ffi/quantize.ts";

export const quantizeHelp = `Usage: llamux __quantize INPUT OUTPUT TYPE

Internal: writes INPUT (a GGUF file) quantized to TYPE (${Object.keys(quantizationTypes).join(", ")}) as OUTPUT.`;

export function quantizeMain(args: string[]): number {
  const [input, output, type] = args;
  if (!input || !output || !type || !Object.hasOwn(quantizationTypes, type)) {
    process.stderr.write(`${quantizeHelp}\n`);
    return 2;
  }
  try {
    quantizeModel(input, output, type as QuantizationType);
    return 0;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
}

if (import.meta.main) process.exit(quantizeMain(process.argv.slice(2)));
