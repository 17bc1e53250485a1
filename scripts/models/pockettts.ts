// Pocket TTS as llama.cpp runs it (conversion/pockettts.py): a `pockettts` backbone (the flow language
// model's transformer: LayerNorm with bias, plain RoPE, GELU FFN, no output head of its own) and its
// projector: the `pockettts_gen` flow net (each backbone hidden state into a 32-d latent and an
// end-of-speech score) with the mimi decoder (transformer over 250 frames, then SEANet, 1920 samples a
// frame at 24 kHz), and the `pockettts_spkenc` voice encoder (SEANet encoder, transformer, downsampling).
// Widths are small; the strides (SEANet 4, 5, 6 and the 16× resampling) are the loader's own.
import { GgmlType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, generalMetadata, projectorMetadata } from "./common.ts";
import { type BuiltTokenizer, type TokenizerSpec, TokenType } from "./tokenizers.ts";
import { constantTensor, randomTensor, weightMakers } from "./weights.ts";

/**
 * A real SentencePiece vocabulary (llama's) with the token that starts the audio, which the pipeline
 * looks up by name, on the id of an ordinary piece (the vocabulary has per-token scores: no appending).
 */
export function pocketttsTokenizer(): TokenizerSpec {
  return { base: "llama-spm", added: [{ text: "<|audio_bos|>", type: TokenType.CONTROL, id: 31999 }], addBos: false, addEos: false };
}

export interface PocketttsShape {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nFf: number;
  nCtx: number;
}

export function pocketttsBackbone(name: string, description: string, shape: PocketttsShape, tokenizer: BuiltTokenizer): ModelContent {
  const arch = "pockettts";
  const E = shape.nEmbd;
  const metadata: ModelContent["metadata"] = [
    ...generalMetadata(arch, name, description),
    [`${arch}.context_length`, ggufKv.uint32(shape.nCtx)],
    [`${arch}.embedding_length`, ggufKv.uint32(E)],
    [`${arch}.block_count`, ggufKv.uint32(shape.nLayer)],
    [`${arch}.feed_forward_length`, ggufKv.uint32(shape.nFf)],
    [`${arch}.attention.head_count`, ggufKv.uint32(shape.nHead)],
    [`${arch}.attention.head_count_kv`, ggufKv.uint32(shape.nHead)],
    [`${arch}.attention.layer_norm_epsilon`, ggufKv.float32(1e-5)],
    [`${arch}.rope.freq_base`, ggufKv.float32(10_000)],
    [`${arch}.rope.dimension_count`, ggufKv.uint32(E / shape.nHead)],
    [`${arch}.vocab_size`, ggufKv.uint32(tokenizer.vocabSize)],
    ...tokenizer.metadata,
  ];
  const { random, ones, zeros } = weightMakers(name);
  const tensors = [random("token_embd.weight", [E, tokenizer.vocabSize]), ones("output_norm.weight", E), zeros("output_norm.bias", [E])];
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = `blk.${i}`;
    tensors.push(
      ones(`${blk}.attn_norm.weight`, E), zeros(`${blk}.attn_norm.bias`, [E]),
      random(`${blk}.attn_q.weight`, [E, E]), random(`${blk}.attn_k.weight`, [E, E]), random(`${blk}.attn_v.weight`, [E, E]),
      random(`${blk}.attn_output.weight`, [E, E]),
      ones(`${blk}.ffn_norm.weight`, E), zeros(`${blk}.ffn_norm.bias`, [E]),
      random(`${blk}.ffn_up.weight`, [E, shape.nFf]), random(`${blk}.ffn_down.weight`, [shape.nFf, E]),
    );
  }
  return { metadata, tensors };
}

export interface PocketttsProjectorShape {
  /** The backbone's embedding size. */
  talkerEmbd: number;
  /** mimi: transformer width (heads of its head size), FFN, layers; SEANet channels at its widest. */
  mimiEmbd: number;
  mimiHeads: number;
  mimiFf: number;
  mimiLayers: number;
  seanetChannels: number;
  /** Flow net width, its blocks, the time embeddings' frequencies. */
  flowEmbd: number;
  flowBlocks: number;
  timeFrequencies: number;
}

/** The latent the flow net makes per frame (pocket-tts's 32-d mimi latent). */
const LATENT = 32;
/** SEANet encoder strides (the decoder walks them backwards) and mimi's resampling between 200 Hz and 12.5 Hz. */
const SEANET_RATIOS = [4, 5, 6];
const MIMI_DOWNSAMPLE = 16;
/** The decoder's last conv's gain, so that random latents make PCM mostly inside [-1, 1]. */
const OUTPUT_GAIN = 1e-2;

export function pocketttsProjector(name: string, description: string, shape: PocketttsProjectorShape): ModelContent {
  const { talkerEmbd: E, mimiEmbd: D } = shape;
  const common = (prefix: string): ModelContent["metadata"] => [
    [`clip.${prefix}.projection_dim`, ggufKv.uint32(E)],
    [`clip.${prefix}.embedding_length`, ggufKv.uint32(D)],
    [`clip.${prefix}.feed_forward_length`, ggufKv.uint32(shape.mimiFf)],
    [`clip.${prefix}.block_count`, ggufKv.uint32(shape.mimiLayers)],
    [`clip.${prefix}.attention.head_count`, ggufKv.uint32(shape.mimiHeads)],
    [`clip.${prefix}.attention.layer_norm_epsilon`, ggufKv.float32(1e-5)],
  ];
  const metadata: ModelContent["metadata"] = [
    ...projectorMetadata(name, description),
    ["clip.has_audio_encoder", ggufKv.bool(true)],
    ["clip.audio.projector_type", ggufKv.string("pockettts_spkenc")],
    ...common("audio"),
    // the encoder reads the raw waveform: one "mel bin"
    ["clip.audio.num_mel_bins", ggufKv.uint32(1)],
    ["clip.has_gen_audio_encoder", ggufKv.bool(true)],
    ["clip.gen.audio.projector_type", ggufKv.string("pockettts_gen")],
    ...common("gen.audio"),
    // the pack whose tuned settings the pipeline applies (temperature 0.3)
    ["clip.gen.audio.model_variant", ggufKv.string("english")],
  ];
  const { ones, zeros } = weightMakers(name);
  // unit-gain weights (std 1/sqrt(inputs)), so that random latents make audible PCM
  const unit = (tensorName: string, dims: number[], inputs = dims.length === 2 ? dims[0]! : dims[0]! * dims[1]!, type = GgmlType.F16 as GgmlType.F16 | GgmlType.F32) =>
    randomTensor(name, tensorName, dims, { type, std: 1 / Math.sqrt(inputs) });
  const linear = (tensorName: string, inputs: number, outputs: number) => [unit(`${tensorName}.weight`, [inputs, outputs]), zeros(`${tensorName}.bias`, [outputs])];
  const conv = (tensorName: string, width: number, inputs: number, outputs: number) =>
    [unit(`${tensorName}.weight`, [width, inputs, outputs]), zeros(`${tensorName}.bias`, [outputs])];
  const transformer = (prefix: string) => {
    const tensors = [];
    for (let i = 0; i < shape.mimiLayers; i++) {
      const blk = `${prefix}.blk.${i}`;
      tensors.push(
        ones(`${blk}.ln1.weight`, D), zeros(`${blk}.ln1.bias`, [D]),
        unit(`${blk}.attn_q.weight`, [D, D]), unit(`${blk}.attn_k.weight`, [D, D]), unit(`${blk}.attn_v.weight`, [D, D]),
        unit(`${blk}.attn_out.weight`, [D, D]),
        ones(`${blk}.ls1.weight`, D),
        ones(`${blk}.ln2.weight`, D), zeros(`${blk}.ln2.bias`, [D]),
        unit(`${blk}.ffn_up.weight`, [D, shape.mimiFf]), unit(`${blk}.ffn_down.weight`, [shape.mimiFf, D]),
        ones(`${blk}.ls2.weight`, D),
      );
    }
    return tensors;
  };
  // SEANet stage channels: the encoder doubles them at each stride, the decoder halves them back
  const C = shape.seanetChannels;
  const stageChannels = SEANET_RATIOS.map((_, i) => C >> (SEANET_RATIOS.length - i));
  const seanet = (prefix: string, decoder: boolean) => {
    const tensors = [];
    if (!decoder) {
      tensors.push(...conv(`${prefix}.conv_in`, 7, 1, stageChannels[0]!));
      SEANET_RATIOS.forEach((stride, i) => {
        const channels = stageChannels[i]!;
        const next = i + 1 < stageChannels.length ? stageChannels[i + 1]! : C;
        tensors.push(
          ...conv(`${prefix}.blk.${i}.res_conv1`, 3, channels, channels / 2),
          ...conv(`${prefix}.blk.${i}.res_conv2`, 1, channels / 2, channels),
          ...conv(`${prefix}.blk.${i}.scale_conv`, 2 * stride, channels, next),
        );
      });
      tensors.push(...conv(`${prefix}.conv_out`, 3, C, D));
    } else {
      tensors.push(...conv(`${prefix}.conv_in`, 7, D, C));
      let channels = C;
      SEANET_RATIOS.slice().reverse().forEach((stride, i) => {
        const out = channels / 2;
        // transposed conv kernels are [width, out, in], F32
        tensors.push(
          unit(`${prefix}.blk.${i}.scale_conv.weight`, [2 * stride, out, channels], 2 * channels, GgmlType.F32), zeros(`${prefix}.blk.${i}.scale_conv.bias`, [out]),
          ...conv(`${prefix}.blk.${i}.res_conv1`, 3, out, out / 2),
          ...conv(`${prefix}.blk.${i}.res_conv2`, 1, out / 2, out),
        );
        channels = out;
      });
      // the last conv scales down: unit gain all the way saturates the PCM (a square wave at ±1)
      tensors.push(randomTensor(name, `${prefix}.conv_out.weight`, [3, channels, 1], { std: OUTPUT_GAIN / Math.sqrt(3 * channels) }), zeros(`${prefix}.conv_out.bias`, [1]));
    }
    return tensors;
  };

  const W = shape.flowEmbd;
  const tensors = [
    // voice encoder: SEANet, the mimi transformer ("a.blk.*"), downsampling to 12.5 Hz, projection into the backbone
    ...seanet("a.seanet", false),
    ...transformer("a"),
    unit("a.downsample.conv.weight", [2 * MIMI_DOWNSAMPLE, D, D]),
    unit("a.speaker_proj.weight", [D, E]),
    // flow net
    ...linear("a.gen.flow.input_proj", LATENT, W),
    ...linear("a.gen.flow.cond_embd", E, W),
  ];
  for (let i = 0; i < 2; i++) {
    const freqs = Float32Array.from({ length: shape.timeFrequencies }, (_, k) => Math.exp(-Math.log(10_000) * k / shape.timeFrequencies));
    tensors.push(
      { name: `a.gen.flow.time.${i}.freqs`, shape: [shape.timeFrequencies], type: GgmlType.F32, data: freqs },
      ...linear(`a.gen.flow.time.${i}.up`, 2 * shape.timeFrequencies, W),
      ...linear(`a.gen.flow.time.${i}.down`, W, W),
      ones(`a.gen.flow.time.${i}.norm`, W),
    );
  }
  for (let i = 0; i < shape.flowBlocks; i++) {
    tensors.push(
      ones(`a.gen.flow.blk.${i}.norm.weight`, W), zeros(`a.gen.flow.blk.${i}.norm.bias`, [W]),
      ...linear(`a.gen.flow.blk.${i}.up`, W, W), ...linear(`a.gen.flow.blk.${i}.down`, W, W), ...linear(`a.gen.flow.blk.${i}.ada`, W, 3 * W),
    );
  }
  tensors.push(
    ...linear("a.gen.flow.final.ada", W, 2 * W),
    ...linear("a.gen.flow.final.proj", W, LATENT),
    // the end-of-speech head never fires (its threshold is -4): each text chunk runs to its frame budget
    unit("a.gen.out_eos.weight", [E, 1]),
    constantTensor("a.gen.out_eos.bias", [1], -10),
    unit("a.gen.input_linear.weight", [LATENT, E]),
    zeros("a.gen.emb_mean", [LATENT]),
    ones("a.gen.emb_std", LATENT),
    // mimi decoder: up-projection, depthwise upsampling to 200 Hz, transformer, SEANet
    unit("a.gen.wav.quant_out.weight", [LATENT, D]),
    unit("a.gen.wav.upsample.weight", [2 * MIMI_DOWNSAMPLE, 1, D], 2, GgmlType.F32),
    ...transformer("a.gen.wav.tfm"),
    ...seanet("a.gen.wav.seanet", true),
  );
  return { metadata, tensors };
}
