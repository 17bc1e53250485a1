// LoRA adapters in llama.cpp's adapter GGUF form (src/llama-adapter.cpp): general.type "adapter",
// adapter.type "lora", and for each adapted weight W of shape [in, out] a pair W.lora_a [in, rank] and
// W.lora_b [rank, out]. Large random factors so the adapter visibly changes output.
import { GgmlType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, FILE_TYPE_MOSTLY_F16 } from "./common.ts";
import { type LlamaShape } from "./llama.ts";
import { type Lfm2Shape } from "./lfm2.ts";
import { randomTensor } from "./weights.ts";

export interface LoraShape<Base> {
  base: Base;
  rank: number;
  alpha: number;
}

/** A llama adapter: every layer's attention queries and FFN up projection. */
export function llamaLora(name: string, description: string, shape: LoraShape<LlamaShape>): ModelContent {
  const { base } = shape;
  const headDim = base.nEmbd / base.nHead;
  const weights: Array<[string, number, number]> = [];
  for (let i = 0; i < base.nLayer; i++) {
    weights.push([`blk.${i}.attn_q.weight`, base.nEmbd, base.nHead * headDim]);
    weights.push([`blk.${i}.ffn_up.weight`, base.nEmbd, base.nFf]);
  }
  return loraAdapter("llama", name, description, shape, weights);
}

/** An LFM2 adapter: every layer's FFN up projection (short-conv and attention layers alike have one). */
export function lfm2Lora(name: string, description: string, shape: LoraShape<Lfm2Shape>): ModelContent {
  const { base } = shape;
  const weights = Array.from({ length: base.nLayer }, (_, i): [string, number, number] => [`blk.${i}.ffn_up.weight`, base.nEmbd, base.nFf]);
  return loraAdapter("lfm2", name, description, shape, weights);
}

function loraAdapter(architecture: string, name: string, description: string, shape: LoraShape<unknown>, weights: Array<[string, number, number]>): ModelContent {
  const metadata: ModelContent["metadata"] = [
    ["general.architecture", ggufKv.string(architecture)],
    ["general.type", ggufKv.string("adapter")],
    ["general.name", ggufKv.string(name)],
    ["general.description", ggufKv.string(description)],
    ["general.file_type", ggufKv.uint32(FILE_TYPE_MOSTLY_F16)],
    ["adapter.type", ggufKv.string("lora")],
    ["adapter.lora.alpha", ggufKv.float32(shape.alpha)],
  ];
  const tensors = weights.flatMap(([weight, inputs, outputs]) => [
    randomTensor(name, `${weight}.lora_a`, [inputs, shape.rank], { type: GgmlType.F32, std: 0.5 }),
    randomTensor(name, `${weight}.lora_b`, [shape.rank, outputs], { type: GgmlType.F32, std: 0.5 }),
  ]);
  return { metadata, tensors };
}
