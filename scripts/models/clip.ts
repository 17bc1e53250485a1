// A LLaVA-type vision projector (tools/mtmd/models/llava.cpp in llama.cpp): a CLIP ViT encoder over
// square patches, then the `mlp` projector (mm.0 -> GELU -> mm.2) into the text model's embedding space.
// libmtmd loads it next to a text model whose embedding size equals `projectionDim`.
import { GgmlType, GgufValueType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, projectorMetadata } from "./common.ts";
import { weightMakers } from "./weights.ts";

export interface ClipShape {
  imageSize: number;
  patchSize: number;
  nEmbd: number;
  /** Must differ from nEmbd: libmtmd swaps up/down of old LLaVA files whose down projection is nEmbd wide. */
  nFf: number;
  nLayer: number;
  nHead: number;
  /** The text model's embedding size. */
  projectionDim: number;
  normEps: number;
}

export function clipProjector(name: string, description: string, shape: ClipShape): ModelContent {
  const { nEmbd, nFf, projectionDim } = shape;
  const patches = (shape.imageSize / shape.patchSize) ** 2;
  const metadata: ModelContent["metadata"] = [
    ...projectorMetadata(name, description),
    ["clip.projector_type", ggufKv.string("mlp")],
    ["clip.has_vision_encoder", ggufKv.bool(true)],
    ["clip.use_gelu", ggufKv.bool(true)],
    ["clip.vision.image_size", ggufKv.uint32(shape.imageSize)],
    ["clip.vision.patch_size", ggufKv.uint32(shape.patchSize)],
    ["clip.vision.embedding_length", ggufKv.uint32(nEmbd)],
    ["clip.vision.feed_forward_length", ggufKv.uint32(nFf)],
    ["clip.vision.block_count", ggufKv.uint32(shape.nLayer)],
    ["clip.vision.attention.head_count", ggufKv.uint32(shape.nHead)],
    ["clip.vision.attention.layer_norm_epsilon", ggufKv.float32(shape.normEps)],
    ["clip.vision.projection_dim", ggufKv.uint32(projectionDim)],
    ["clip.vision.image_mean", ggufKv.array(GgufValueType.FLOAT32, [0.48145466, 0.4578275, 0.40821073])],
    ["clip.vision.image_std", ggufKv.array(GgufValueType.FLOAT32, [0.26862954, 0.26130258, 0.27577711])],
  ];

  const { random, ones, zeros } = weightMakers(name);
  const tensors = [
    random("v.patch_embd.weight", [shape.patchSize, shape.patchSize, 3, nEmbd]),
    zeros("v.patch_embd.bias", nEmbd),
    random("v.position_embd.weight", [nEmbd, patches], GgmlType.F32),
    ones("v.pre_ln.weight", nEmbd),
    zeros("v.pre_ln.bias", nEmbd),
  ];
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = `v.blk.${i}`;
    for (const proj of ["attn_q", "attn_k", "attn_v", "attn_out"]) {
      tensors.push(random(`${blk}.${proj}.weight`, [nEmbd, nEmbd]), zeros(`${blk}.${proj}.bias`, nEmbd));
    }
    tensors.push(
      ones(`${blk}.ln1.weight`, nEmbd),
      zeros(`${blk}.ln1.bias`, nEmbd),
      ones(`${blk}.ln2.weight`, nEmbd),
      zeros(`${blk}.ln2.bias`, nEmbd),
      random(`${blk}.ffn_up.weight`, [nEmbd, nFf]),
      zeros(`${blk}.ffn_up.bias`, nFf),
      random(`${blk}.ffn_down.weight`, [nFf, nEmbd]),
      zeros(`${blk}.ffn_down.bias`, nEmbd),
    );
  }
  tensors.push(
    random("mm.0.weight", [nEmbd, projectionDim]),
    zeros("mm.0.bias", projectionDim),
    random("mm.2.weight", [projectionDim, projectionDim]),
    zeros("mm.2.bias", projectionDim),
  );
  return { metadata, tensors };
}
