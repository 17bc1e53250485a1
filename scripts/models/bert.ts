// The `bert` architecture (src/models/bert.cpp in llama.cpp): post-norm encoder with learned positions, for embeddings.
import { GgmlType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, generalMetadata } from "./common.ts";
import { type BuiltTokenizer } from "./tokenizers.ts";
import { weightMakers } from "./weights.ts";

export interface BertShape {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nFf: number;
  nCtx: number;
  normEps: number;
  /** llama_pooling_type: 1 = mean, 2 = cls, 4 = rank (a reranker) */
  poolingType: number;
  /** A reranker's classification head: `cls` (dense + tanh) and `cls.output` (one score), as bert.cpp loads them. */
  classifier?: boolean;
}

export function bertModel(name: string, description: string, shape: BertShape, tokenizer: BuiltTokenizer): ModelContent {
  const arch = "bert";
  const { nEmbd, nFf } = shape;
  const nVocab = tokenizer.vocabSize;
  const metadata: ModelContent["metadata"] = [
    ...generalMetadata(arch, name, description),
    [`${arch}.context_length`, ggufKv.uint32(shape.nCtx)],
    [`${arch}.embedding_length`, ggufKv.uint32(nEmbd)],
    [`${arch}.block_count`, ggufKv.uint32(shape.nLayer)],
    [`${arch}.feed_forward_length`, ggufKv.uint32(nFf)],
    [`${arch}.attention.head_count`, ggufKv.uint32(shape.nHead)],
    [`${arch}.attention.layer_norm_epsilon`, ggufKv.float32(shape.normEps)],
    [`${arch}.attention.causal`, ggufKv.bool(false)],
    [`${arch}.pooling_type`, ggufKv.uint32(shape.poolingType)],
    ...tokenizer.metadata,
  ];

  const { random, ones, zeros } = weightMakers(name);
  const tensors = [
    random("token_embd.weight", [nEmbd, nVocab]),
    // added to F32 activations with ggml_add, so kept F32
    random("token_types.weight", [nEmbd, 2], GgmlType.F32),
    random("position_embd.weight", [nEmbd, shape.nCtx]),
    ones("token_embd_norm.weight", nEmbd),
    zeros("token_embd_norm.bias", nEmbd),
  ];
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = `blk.${i}`;
    tensors.push(
      random(`${blk}.attn_q.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_q.bias`, nEmbd),
      random(`${blk}.attn_k.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_k.bias`, nEmbd),
      random(`${blk}.attn_v.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_v.bias`, nEmbd),
      random(`${blk}.attn_output.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_output.bias`, nEmbd),
      ones(`${blk}.attn_output_norm.weight`, nEmbd),
      zeros(`${blk}.attn_output_norm.bias`, nEmbd),
      random(`${blk}.ffn_up.weight`, [nEmbd, nFf]),
      zeros(`${blk}.ffn_up.bias`, nFf),
      random(`${blk}.ffn_down.weight`, [nFf, nEmbd]),
      zeros(`${blk}.ffn_down.bias`, nEmbd),
      ones(`${blk}.layer_output_norm.weight`, nEmbd),
      zeros(`${blk}.layer_output_norm.bias`, nEmbd),
    );
  }
  if (shape.classifier) {
    tensors.push(
      random("cls.weight", [nEmbd, nEmbd], GgmlType.F32),
      zeros("cls.bias", nEmbd),
      random("cls.output.weight", [nEmbd, 1], GgmlType.F32),
      zeros("cls.output.bias", 1),
    );
  }
  return { metadata, tensors };
}
