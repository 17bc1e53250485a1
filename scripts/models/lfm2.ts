// The `lfm2` and `lfm2moe` architectures (src/models/lfm2.cpp, lfm2moe.cpp in llama.cpp): hybrid blocks of
// gated short convolutions and GQA attention. A layer is attention when its head_count_kv entry is non-zero.
import { GgmlType, GgufValueType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, generalMetadata } from "./common.ts";
import { type BuiltTokenizer } from "./tokenizers.ts";
import { weightMakers } from "./weights.ts";

export interface Lfm2MoeShape {
  nExpert: number;
  nExpertUsed: number;
  nFfExpert: number;
  /** the first layers keep a dense FFN */
  leadingDenseLayers: number;
}

export interface Lfm2Shape {
  nEmbd: number;
  nLayer: number;
  attentionLayers: readonly number[];
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nCtx: number;
  /** shortconv.l_cache: convolution kernel length */
  convLength: number;
  ropeFreqBase: number;
  rmsEps: number;
  /** no output.weight: llama.cpp reuses token_embd, as the real LFM2 models do */
  tiedOutput: boolean;
  moe?: Lfm2MoeShape;
  /**
   * Write the file as GGUFs published for Ollama are: the final norm named output_norm.weight and a
   * feed_forward_length 1.5 times the real one. llama.cpp cannot load such a file until it is repaired.
   */
  ollamaNaming?: boolean;
}

const EXPERT_GATING_SIGMOID = 2;

export function lfm2Model(name: string, description: string, shape: Lfm2Shape, tokenizer: BuiltTokenizer): ModelContent {
  const arch = shape.moe ? "lfm2moe" : "lfm2";
  const { nEmbd, moe } = shape;
  const headDim = nEmbd / shape.nHead;
  const nVocab = tokenizer.vocabSize;
  const isAttention = (i: number) => shape.attentionLayers.includes(i);
  const headCountKv = Array.from({ length: shape.nLayer }, (_, i) => (isAttention(i) ? shape.nHeadKv : 0));
  const metadata: ModelContent["metadata"] = [
    ...generalMetadata(arch, name, description),
    [`${arch}.context_length`, ggufKv.uint32(shape.nCtx)],
    [`${arch}.embedding_length`, ggufKv.uint32(nEmbd)],
    [`${arch}.block_count`, ggufKv.uint32(shape.nLayer)],
    [`${arch}.feed_forward_length`, ggufKv.uint32(shape.ollamaNaming ? (shape.nFf * 3) / 2 : shape.nFf)],
    [`${arch}.attention.head_count`, ggufKv.uint32(shape.nHead)],
    [`${arch}.attention.head_count_kv`, ggufKv.array(GgufValueType.INT32, headCountKv)],
    [`${arch}.attention.layer_norm_rms_epsilon`, ggufKv.float32(shape.rmsEps)],
    [`${arch}.rope.freq_base`, ggufKv.float32(shape.ropeFreqBase)],
    [`${arch}.shortconv.l_cache`, ggufKv.uint32(shape.convLength)],
    [`${arch}.vocab_size`, ggufKv.uint32(nVocab)],
  ];
  if (moe) {
    metadata.push(
      [`${arch}.expert_count`, ggufKv.uint32(moe.nExpert)],
      [`${arch}.expert_used_count`, ggufKv.uint32(moe.nExpertUsed)],
      [`${arch}.expert_feed_forward_length`, ggufKv.uint32(moe.nFfExpert)],
      [`${arch}.leading_dense_block_count`, ggufKv.uint32(moe.leadingDenseLayers)],
      [`${arch}.expert_gating_func`, ggufKv.uint32(EXPERT_GATING_SIGMOID)],
    );
  }
  metadata.push(...tokenizer.metadata);

  const { random, ones, zeros } = weightMakers(name);
  // the final norm is stored under the name token_embd_norm (a llama.cpp quirk)
  const finalNorm = shape.ollamaNaming ? "output_norm.weight" : "token_embd_norm.weight";
  const tensors = [random("token_embd.weight", [nEmbd, nVocab]), ones(finalNorm, nEmbd)];
  if (!shape.tiedOutput) tensors.push(random("output.weight", [nEmbd, nVocab]));
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = `blk.${i}`;
    tensors.push(ones(`${blk}.attn_norm.weight`, nEmbd));
    if (isAttention(i)) {
      tensors.push(
        ones(`${blk}.attn_q_norm.weight`, headDim),
        ones(`${blk}.attn_k_norm.weight`, headDim),
        random(`${blk}.attn_q.weight`, [nEmbd, nEmbd]),
        random(`${blk}.attn_k.weight`, [nEmbd, shape.nHeadKv * headDim]),
        random(`${blk}.attn_v.weight`, [nEmbd, shape.nHeadKv * headDim]),
        random(`${blk}.attn_output.weight`, [nEmbd, nEmbd]),
      );
    } else {
      tensors.push(
        // ggml_ssm_conv reads the kernel as F32 only
        random(`${blk}.shortconv.conv.weight`, [shape.convLength, nEmbd], GgmlType.F32),
        random(`${blk}.shortconv.in_proj.weight`, [nEmbd, 3 * nEmbd]),
        random(`${blk}.shortconv.out_proj.weight`, [nEmbd, nEmbd]),
      );
    }
    tensors.push(ones(`${blk}.ffn_norm.weight`, nEmbd));
    if (moe && i >= moe.leadingDenseLayers) {
      tensors.push(
        random(`${blk}.ffn_gate_inp.weight`, [nEmbd, moe.nExpert], GgmlType.F32),
        random(`${blk}.ffn_gate_exps.weight`, [nEmbd, moe.nFfExpert, moe.nExpert]),
        random(`${blk}.ffn_down_exps.weight`, [moe.nFfExpert, nEmbd, moe.nExpert]),
        random(`${blk}.ffn_up_exps.weight`, [nEmbd, moe.nFfExpert, moe.nExpert]),
        zeros(`${blk}.exp_probs_b.bias`, moe.nExpert),
      );
    } else {
      tensors.push(
        random(`${blk}.ffn_gate.weight`, [nEmbd, shape.nFf]),
        random(`${blk}.ffn_down.weight`, [shape.nFf, nEmbd]),
        random(`${blk}.ffn_up.weight`, [nEmbd, shape.nFf]),
      );
    }
  }
  return { metadata, tensors };
}
