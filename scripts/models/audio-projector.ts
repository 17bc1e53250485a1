// A Qwen2-Audio-type audio projector (`qwen2a` in tools/mtmd: models/whisper-enc.cpp): a Whisper encoder
// (two 1-D convolutions over 128 mel bins, the second with stride 2; learned positions; pre-norm blocks
// with no K bias) pooled by 2, then one linear layer (mm.a.fc) into the text model's embedding space.
// libmtmd cuts audio into 30-second chunks of 3000 mel frames: each chunk becomes 750 embedding tokens.
import { GgmlType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, projectorMetadata } from "./common.ts";
import { weightMakers } from "./weights.ts";

export interface AudioProjectorShape {
  nEmbd: number;
  nFf: number;
  nLayer: number;
  nHead: number;
  /** The text model's embedding size. */
  projectionDim: number;
  normEps: number;
  /** Whisper-large-v3 and Qwen2-Audio use 128. */
  nMel: number;
}

/** Positions after the stride-2 convolution of one 3000-frame chunk. */
const POSITIONS = 1500;

export function audioProjector(name: string, description: string, shape: AudioProjectorShape): ModelContent {
  const { nEmbd, nFf, projectionDim } = shape;
  const metadata: ModelContent["metadata"] = [
    ...projectorMetadata(name, description),
    ["clip.projector_type", ggufKv.string("qwen2a")],
    ["clip.has_audio_encoder", ggufKv.bool(true)],
    ["clip.audio.embedding_length", ggufKv.uint32(nEmbd)],
    ["clip.audio.feed_forward_length", ggufKv.uint32(nFf)],
    ["clip.audio.block_count", ggufKv.uint32(shape.nLayer)],
    ["clip.audio.attention.head_count", ggufKv.uint32(shape.nHead)],
    ["clip.audio.attention.layer_norm_epsilon", ggufKv.float32(shape.normEps)],
    ["clip.audio.projection_dim", ggufKv.uint32(projectionDim)],
    ["clip.audio.num_mel_bins", ggufKv.uint32(shape.nMel)],
  ];

  const { random, ones, zeros } = weightMakers(name);
  const tensors = [
    // ggml's conv_1d kernels: [kernel width, input channels, output channels]; biases broadcast over frames
    random("a.conv1d.1.weight", [3, shape.nMel, nEmbd]),
    zeros("a.conv1d.1.bias", [1, nEmbd]),
    random("a.conv1d.2.weight", [3, nEmbd, nEmbd]),
    zeros("a.conv1d.2.bias", [1, nEmbd]),
    random("a.position_embd.weight", [nEmbd, POSITIONS], GgmlType.F32),
  ];
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = `a.blk.${i}`;
    tensors.push(
      random(`${blk}.attn_q.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_q.bias`, [nEmbd]),
      random(`${blk}.attn_k.weight`, [nEmbd, nEmbd]),
      random(`${blk}.attn_v.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_v.bias`, [nEmbd]),
      random(`${blk}.attn_out.weight`, [nEmbd, nEmbd]),
      zeros(`${blk}.attn_out.bias`, [nEmbd]),
      ones(`${blk}.ln1.weight`, nEmbd),
      zeros(`${blk}.ln1.bias`, [nEmbd]),
      ones(`${blk}.ln2.weight`, nEmbd),
      zeros(`${blk}.ln2.bias`, [nEmbd]),
      random(`${blk}.ffn_up.weight`, [nEmbd, nFf]),
      zeros(`${blk}.ffn_up.bias`, [nFf]),
      random(`${blk}.ffn_down.weight`, [nFf, nEmbd]),
      zeros(`${blk}.ffn_down.bias`, [nEmbd]),
    );
  }
  tensors.push(
    ones("a.post_ln.weight", nEmbd),
    zeros("a.post_ln.bias", [nEmbd]),
    random("mm.a.fc.weight", [nEmbd, projectionDim]),
    zeros("mm.a.fc.bias", [projectionDim]),
  );
  return { metadata, tensors };
}
