// Model quantization with llama.cpp's own quantizer.
import { loadNative } from "./native.ts";
import { StructBuffer, quantizeParamsLayout } from "./layouts.ts";
import { cstr } from "./strings.ts";
import { physicalCoreCount } from "./hardware.ts";

export const quantizationTypes = { F16: 1, Q4_0: 2, Q8_0: 7, Q4_K_M: 15, Q5_K_M: 17, Q6_K: 18 } as const;
export type QuantizationType = keyof typeof quantizationTypes;

export function quantizeModel(inputPath: string, outputPath: string, type: QuantizationType, threads = physicalCoreCount()): void {
  const n = loadNative();
  const params = new StructBuffer(quantizeParamsLayout);
  n.shim.llamux_quantize_default_params(params.pointer);
  params.set("nthread", threads);
  params.set("ftype", quantizationTypes[type]);
  const status = n.llama.llama_model_quantize(cstr(inputPath), cstr(outputPath), params.pointer);
  if (status !== 0) throw new Error(`Cannot quantize "${inputPath}" to ${type}: llama_model_quantize returned ${status}`);
}
