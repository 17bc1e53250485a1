// The `llama` architecture (src/models/llama.cpp in llama.cpp): RMS norm, RoPE, GQA attention, SwiGLU FFN.
import { ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, generalMetadata } from "./common.ts";
import { type BuiltTokenizer } from "./tokenizers.ts";
import { weightMakers } from "./weights.ts";
import { type ShortReplies, shortReplyTensors } from "./short-replies.ts";

export interface LlamaShape {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nCtx: number;
  ropeFreqBase: number;
  rmsEps: number;
  /** no output.weight: llama.cpp reuses token_embd, as Llama 3.2 1B does */
  tiedOutput: boolean;
  /** an output head that answers in a few of these words and then ends the turn (agents' tests) */
  shortReplies?: ShortReplies;
}

export function llamaModel(name: string, description: string, shape: LlamaShape, tokenizer: BuiltTokenizer): ModelContent {
  const arch = "llama";
  const nVocab = tokenizer.vocabSize;
  const metadata = [
    ...generalMetadata(arch, name, description),
    ...decoderHyperparameters(arch, shape),
    [`${arch}.vocab_size`, ggufKv.uint32(nVocab)],
    ...tokenizer.metadata,
  ] satisfies ModelContent["metadata"];

  const makers = weightMakers(name);
  const { random, ones } = makers;
  const tensors = shape.shortReplies
    ? [...shortReplyTensors(name, shape.nEmbd, tokenizer, shape.shortReplies), ones("output_norm.weight", shape.nEmbd)]
    : [random("token_embd.weight", [shape.nEmbd, nVocab]), ones("output_norm.weight", shape.nEmbd)];
  if (!shape.tiedOutput && !shape.shortReplies) tensors.push(random("output.weight", [shape.nEmbd, nVocab]));
  for (let i = 0; i < shape.nLayer; i++) tensors.push(...decoderBlock(makers, `blk.${i}`, shape));
  return { metadata, tensors };
}

export type DecoderBlockShape = Pick<LlamaShape, "nEmbd" | "nHead" | "nHeadKv" | "nFf">;

/**
 * One pre-norm decoder block as llama.cpp names it: GQA attention and a SwiGLU FFN; `qkNorm` adds the
 * per-head RMS norms of Q and K that Qwen3's blocks have.
 */
export function decoderBlock(makers: ReturnType<typeof weightMakers>, blk: string, shape: DecoderBlockShape, qkNorm = false): ModelContent["tensors"] {
  const { random, ones } = makers;
  const headDim = shape.nEmbd / shape.nHead;
  return [
    ones(`${blk}.attn_norm.weight`, shape.nEmbd),
    random(`${blk}.attn_q.weight`, [shape.nEmbd, shape.nHead * headDim]),
    random(`${blk}.attn_k.weight`, [shape.nEmbd, shape.nHeadKv * headDim]),
    random(`${blk}.attn_v.weight`, [shape.nEmbd, shape.nHeadKv * headDim]),
    random(`${blk}.attn_output.weight`, [shape.nHead * headDim, shape.nEmbd]),
    ...(qkNorm ? [ones(`${blk}.attn_q_norm.weight`, headDim), ones(`${blk}.attn_k_norm.weight`, headDim)] : []),
    ones(`${blk}.ffn_norm.weight`, shape.nEmbd),
    random(`${blk}.ffn_gate.weight`, [shape.nEmbd, shape.nFf]),
    random(`${blk}.ffn_down.weight`, [shape.nFf, shape.nEmbd]),
    random(`${blk}.ffn_up.weight`, [shape.nEmbd, shape.nFf]),
  ];
}

export type DecoderHyperparameters = DecoderBlockShape & Pick<LlamaShape, "nLayer" | "nCtx" | "rmsEps" | "ropeFreqBase">;

/** The hyperparameters of a Llama-like decoder under its architecture's keys, in the order llama.cpp's converter writes them. */
export function decoderHyperparameters(arch: string, shape: DecoderHyperparameters): ModelContent["metadata"] {
  return [
    [`${arch}.context_length`, ggufKv.uint32(shape.nCtx)],
    [`${arch}.embedding_length`, ggufKv.uint32(shape.nEmbd)],
    [`${arch}.block_count`, ggufKv.uint32(shape.nLayer)],
    [`${arch}.feed_forward_length`, ggufKv.uint32(shape.nFf)],
    [`${arch}.attention.head_count`, ggufKv.uint32(shape.nHead)],
    [`${arch}.attention.head_count_kv`, ggufKv.uint32(shape.nHeadKv)],
    [`${arch}.attention.layer_norm_rms_epsilon`, ggufKv.float32(shape.rmsEps)],
    [`${arch}.rope.freq_base`, ggufKv.float32(shape.ropeFreqBase)],
    [`${arch}.rope.dimension_count`, ggufKv.uint32(shape.nEmbd / shape.nHead)],
  ];
}
