// A LoRA adapter for the `llama` architecture in llama.cpp's adapter GGUF form (src/llama-adapter.cpp):
// general.type "adapter", adapter.type "lora", and for each adapted weight W of shape [in, out] a pair
// W.lora_a [in, rank] and W.lora_b [rank, out]. Large random factors so the adapter visibly changes output.
import { GgmlType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, FILE_TYPE_MOSTLY_F16 } from "./common.ts";
import { type LlamaShape } from "./llama.ts";
import { randomTensor } from "./weights.ts";

export interface LoraShape {
  base: LlamaShape;
  rank: number;
  alpha: number;
}

export function llamaLora(name: string, description: string, shape: LoraShape): ModelContent {
  const { base, rank } = shape;
  const headDim = base.nEmbd / base.nHead;
  const metadata: ModelContent["metadata"] = [
    ["general.architecture", ggufKv.string("llama")],
    ["general.type", ggufKv.string("adapter")],
    ["general.name", ggufKv.string(name)],
    ["general.description", ggufKv.string(description)],
    ["general.file_type", ggufKv.uint32(FILE_TYPE_MOSTLY_F16)],
    ["adapter.type", ggufKv.string("lora")],
    ["adapter.lora.alpha", ggufKv.float32(shape.alpha)],
  ];
  const pair = (weight: string, inputs: number, outputs: number) => [
    randomTensor(name, `${weight}.lora_a`, [inputs, rank], { type: GgmlType.F32, std: 0.5 }),
    randomTensor(name, `${weight}.lora_b`, [rank, outputs], { type: GgmlType.F32, std: 0.5 }),
  ];
  const tensors = [];
  for (let i = 0; i < base.nLayer; i++) {
    tensors.push(...pair(`blk.${i}.attn_q.weight`, base.nEmbd, base.nHead * headDim));
    tensors.push(...pair(`blk.${i}.ffn_up.weight`, base.nEmbd, base.nFf));
  }
  return { metadata, tensors };
}
