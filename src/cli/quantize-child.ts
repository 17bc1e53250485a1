// `llamux __quantize INPUT OUTPUT TYPE`: runs llama.cpp's quantizer in its own process, so an abort
// inside llama.cpp cannot take `create` down, and prints `progress DONE TOTAL` lines per tensor,
// read from the quantizer's log.
import { quantizationTypes, quantizeModel, type QuantizationType } from "../../ffi/quantize.ts";

export const quantizeChildHelp = `Usage: llamux __quantize INPUT OUTPUT TYPE

Internal: \`llamux create -q\` starts this to quantize a GGUF file with llama.cpp.`;

export async function quantizeChildCommand(args: string[]): Promise<number> {
  if (args.includes("-h") || args.includes("--help")) {
    console.log(quantizeChildHelp);
    return 0;
  }
  const [input, output, type] = args;
  if (!input || !output || !type || !Object.hasOwn(quantizationTypes, type)) {
    console.error(`usage: llamux __quantize INPUT OUTPUT TYPE (TYPE one of ${Object.keys(quantizationTypes).join(", ")})`);
    return 2;
  }
  quantizeModel(input, output, type as QuantizationType);
  return 0;
}
