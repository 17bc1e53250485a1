// Qwen3-TTS as llama.cpp runs it (conversion/qwen3tts.py): a `qwen3tts` backbone (the talker: Qwen3-VL
// layers with interleaved M-RoPE, a vocabulary of text tokens followed by 3072 codec tokens, and an output
// head over the codec tokens only) and its audio-generation projector (`qwen3tts_gen` in tools/mtmd:
// models/qwen3tts-gen.cpp): the code predictor, which turns each talker hidden state into 16 codes, and
// code2wav, which decodes windows of 72 frames of codes into 24 kHz PCM (1920 samples a frame).
// Widths are small; what the loader or the pipeline fixes is kept: the 3072 codec tokens and the names the
// pipeline looks up, 16 codebooks of which the first has 2048 entries, 16 code2wav attention heads in 8
// layers, and the upsampling strides (2, 2, then 8, 5, 4, 3).
import { GgmlType, GgufValueType, ggufKv } from "../../src/store/gguf.ts";
import { type ModelContent, generalMetadata, projectorMetadata } from "./common.ts";
import { type AddedToken, type TokenizerSpec, TokenType } from "./tokenizers.ts";
import { type BuiltTokenizer } from "./tokenizers.ts";
import { decoderBlock, decoderHyperparameters } from "./llama.ts";
import { randomTensor, weightMakers } from "./weights.ts";

/** The backbone's output head is this many codec tokens wide (llama.cpp fixes it: TAG_LLAMA_N_VOCAB_OUT). */
export const CODEC_VOCAB = 3072;
/** Codec ids below this are the first (semantic) codebook's codes; above it, specials and unused rows. */
const SEMANTIC_CODES = 2048;
/** The codec tokens with a meaning (talker_config's *_id fields of Qwen3-TTS-12Hz), by codec id. */
const NAMED_CODEC_IDS: Record<number, string> = {
  2148: "codec_pad", 2149: "codec_bos", 2150: "codec_eos_token", 2154: "codec_think", 2155: "codec_nothink",
  2156: "codec_think_bos", 2157: "codec_think_eos",
  2050: "codec_language_english", 2055: "codec_language_chinese", 2053: "codec_language_german", 2061: "codec_language_french",
};
const CODEC_EOS = 2150;

/** The codec token names in codec-id order, as conversion/qwen3tts.py names them. */
function codecTokenNames(): string[] {
  return Array.from({ length: CODEC_VOCAB }, (_, i) => `<|${NAMED_CODEC_IDS[i] ?? `codec_${i}`}|>`);
}

/**
 * The Qwen2 vocabulary with the TTS text markers on placeholder ids (where Qwen3-TTS has them), then the
 * codec tokens appended as control tokens: the vocabulary is [text | codec].
 */
export function qwen3ttsTokenizer(): TokenizerSpec {
  const control = (text: string, id?: number): AddedToken => ({ text, type: TokenType.CONTROL, ...(id !== undefined ? { id } : {}) });
  return {
    base: "qwen2",
    added: [
      control("<tts_pad>", 151671), control("<tts_text_bos>", 151672), control("<tts_text_eod>", 151673),
      ...codecTokenNames().map((name) => control(name)),
    ],
    bos: "<|endoftext|>",
    eos: "<|codec_eos_token|>",
    addBos: false,
    addEos: false,
  };
}

export interface Qwen3ttsShape {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nCtx: number;
  /** Interleaved M-RoPE sections: they sum to half the head size. */
  ropeSections: [number, number, number, number];
}

export function qwen3ttsBackbone(name: string, description: string, shape: Qwen3ttsShape, tokenizer: BuiltTokenizer): ModelContent {
  const arch = "qwen3tts";
  const nVocab = tokenizer.vocabSize;
  const codecStart = nVocab - CODEC_VOCAB;
  // As the converter writes it: the last 1024 codec ids can never be sampled, except end of speech.
  const suppressed = Array.from({ length: 1024 }, (_, i) => nVocab - 1024 + i).filter((id) => id !== codecStart + CODEC_EOS);
  const metadata: ModelContent["metadata"] = [
    ...generalMetadata(arch, name, description),
    ...decoderHyperparameters(arch, { ...shape, rmsEps: 1e-6, ropeFreqBase: 1_000_000 }),
    [`${arch}.rope.dimension_sections`, ggufKv.array(GgufValueType.INT32, shape.ropeSections)],
    [`${arch}.vocab_size`, ggufKv.uint32(nVocab)],
    ...tokenizer.metadata,
    ["tokenizer.ggml.suppress_tokens", ggufKv.array(GgufValueType.INT32, suppressed)],
  ];
  const makers = weightMakers(name);
  const { random, ones } = makers;
  const tensors = [
    random("token_embd.weight", [shape.nEmbd, nVocab]),
    ones("output_norm.weight", shape.nEmbd),
    random("output.weight", [shape.nEmbd, CODEC_VOCAB]),
  ];
  // Qwen3's blocks: Llama's with per-head norms of Q and K
  for (let i = 0; i < shape.nLayer; i++) tensors.push(...decoderBlock(makers, `blk.${i}`, shape, true));
  return { metadata, tensors };
}

export interface Qwen3ttsProjectorShape {
  /** The backbone's embedding size. */
  talkerEmbd: number;
  /** Code predictor: hidden size, layers, heads (of headDim each), FFN. */
  predictorEmbd: number;
  predictorLayers: number;
  predictorHeads: number;
  predictorHeadsKv: number;
  predictorHeadDim: number;
  predictorFf: number;
  /** Entries of each of the 15 acoustic codebooks. */
  acousticCodes: number;
  /** code2wav widths: codebook entries, quantizer output, pre-conv output, transformer (16 heads), its FFN, upsampler, DAC. */
  codebookDim: number;
  quantizerOut: number;
  preConvOut: number;
  transformerHeadDim: number;
  transformerFf: number;
  upsampleChannels: number;
  dacChannels: number;
  /** Speaker encoder (ECAPA-TDNN) widths: channels (a multiple of 8, the Res2Net scale), SE, aggregation, attention. */
  speakerChannels: number;
  speakerSe: number;
  speakerAggregate: number;
  speakerAttention: number;
}

/** llama.cpp's fixed code2wav hyperparameters (clip.cpp, PROJECTOR_TYPE_QWEN3TTS_GEN). */
const WAV_LAYERS = 8;
const WAV_HEADS = 16;
const WAV_UPSAMPLE_BLOCKS = 2;
/** The DAC decoder's strides: 8 × 5 × 4 × 3 × the upsampler's 2 × 2 = 1920 samples a frame. */
const DAC_STRIDES = [8, 5, 4, 3];
const DAC_RESIDUAL_UNITS = 3;
const ACOUSTIC_CODEBOOKS = 15;
/** The last conv's gain, so that random codes make PCM mostly inside [-1, 1]. */
const OUTPUT_GAIN = 1e-3;

/** Mel bins of the speaker encoder's front end (24 kHz, n_fft 1024, hop 256). */
const SPEAKER_MELS = 128;
const RES2NET_SCALE = 8;
const SPEAKER_BLOCKS = 3;

export function qwen3ttsProjector(name: string, description: string, shape: Qwen3ttsProjectorShape): ModelContent {
  const metadata: ModelContent["metadata"] = [
    ...projectorMetadata(name, description),
    // the speaker encoder: reference audio into one embedding added to the prompt (libmtmd loads no
    // projector without an audio or vision encoder, so Qwen3-TTS files always carry it)
    ["clip.has_audio_encoder", ggufKv.bool(true)],
    ["clip.audio.projector_type", ggufKv.string("qwen3tts_spkenc")],
    ["clip.audio.projection_dim", ggufKv.uint32(shape.talkerEmbd)],
    ["clip.audio.num_mel_bins", ggufKv.uint32(SPEAKER_MELS)],
    ["clip.audio.block_count", ggufKv.uint32(SPEAKER_BLOCKS)],
    ["clip.audio.embedding_length", ggufKv.uint32(shape.speakerChannels)],
    ["clip.audio.attention.head_count", ggufKv.uint32(1)],
    ["clip.audio.feed_forward_length", ggufKv.uint32(shape.speakerChannels)],
    ["clip.audio.attention.layer_norm_epsilon", ggufKv.float32(1e-5)],
    ["clip.has_gen_audio_encoder", ggufKv.bool(true)],
    ["clip.gen.audio.projector_type", ggufKv.string("qwen3tts_gen")],
    ["clip.gen.audio.projection_dim", ggufKv.uint32(shape.talkerEmbd)],
    ["clip.gen.audio.embedding_length", ggufKv.uint32(shape.predictorEmbd)],
    ["clip.gen.audio.feed_forward_length", ggufKv.uint32(shape.predictorFf)],
    ["clip.gen.audio.block_count", ggufKv.uint32(shape.predictorLayers)],
    ["clip.gen.audio.attention.head_count", ggufKv.uint32(shape.predictorHeads)],
    ["clip.gen.audio.attention.head_count_kv", ggufKv.uint32(shape.predictorHeadsKv)],
    ["clip.gen.audio.attention.layer_norm_epsilon", ggufKv.float32(1e-6)],
  ];
  const { random, ones, zeros } = weightMakers(name);
  const f32 = (tensorName: string, dims: number[]) => random(tensorName, dims, GgmlType.F32);
  const { talkerEmbd: T, predictorEmbd: P, predictorHeadDim: dh, acousticCodes } = shape;
  const tensors = [...speakerEncoderTensors(name, shape)];
  tensors.push(
    // code predictor: embedding tables are F32 (get_rows), matrices F16
    random("a.gen.code.proj_in.weight", [T, P]),
    zeros("a.gen.code.proj_in.bias", [P]),
    f32("a.gen.code.embd.weight", [T, acousticCodes, ACOUSTIC_CODEBOOKS]),
    random("a.gen.code.head.weight", [P, acousticCodes, ACOUSTIC_CODEBOOKS]),
    f32("a.gen.code.out_embd.weight", [T, CODEC_VOCAB]),
    ones("a.gen.code.output_norm.weight", P),
  );
  for (let i = 0; i < shape.predictorLayers; i++) {
    const blk = `a.gen.code.blk.${i}`;
    tensors.push(
      ones(`${blk}.ln1.weight`, P),
      random(`${blk}.attn_q.weight`, [P, shape.predictorHeads * dh]),
      random(`${blk}.attn_k.weight`, [P, shape.predictorHeadsKv * dh]),
      random(`${blk}.attn_v.weight`, [P, shape.predictorHeadsKv * dh]),
      random(`${blk}.attn_out.weight`, [shape.predictorHeads * dh, P]),
      ones(`${blk}.attn_q_norm.weight`, dh),
      ones(`${blk}.attn_k_norm.weight`, dh),
      ones(`${blk}.ln2.weight`, P),
      random(`${blk}.ffn_gate.weight`, [P, shape.predictorFf]),
      random(`${blk}.ffn_up.weight`, [P, shape.predictorFf]),
      random(`${blk}.ffn_down.weight`, [shape.predictorFf, P], GgmlType.F32),
    );
  }

  // code2wav: quantizer, pre-conv, sliding-window transformer, upsampler, DAC decoder. Its weights have
  // unit gain (std 1/sqrt(inputs)) so that random codes make audible PCM rather than values near 0.
  // Inputs of each output: a matrix's first dimension, a conv kernel's width × input channels (given
  // explicitly for transposed convs, whose kernels are [width, out, in]).
  const unitOf = (type: GgmlType.F16 | GgmlType.F32) => (tensorName: string, dims: number[], inputs = dims.length === 2 ? dims[0]! : dims[0]! * dims[1]!) =>
    randomTensor(name, tensorName, dims, { type, std: 1 / Math.sqrt(inputs) });
  const unit = unitOf(GgmlType.F16);
  const unit32 = unitOf(GgmlType.F32);
  const D = shape.codebookDim;
  const Q = shape.quantizerOut;
  const C = shape.preConvOut;
  const H = WAV_HEADS * shape.transformerHeadDim;
  const U = shape.upsampleChannels;
  const A = shape.dacChannels;
  tensors.push(
    unit("a.gen.wav.quant.first.in_proj.weight", [Q, D]),
    unit("a.gen.wav.quant.first.out_proj.weight", [D, Q]),
    unit32("a.gen.wav.quant.first.codebook.weight", [D, SEMANTIC_CODES]),
    unit("a.gen.wav.quant.rest.in_proj.weight", [Q, D]),
    unit("a.gen.wav.quant.rest.out_proj.weight", [D, Q]),
    unit32("a.gen.wav.quant.rest.codebook.weight", [D, acousticCodes, ACOUSTIC_CODEBOOKS]),
    // conv kernels [width, in, out] in F16 (ggml_conv_1d's im2col), transposed-conv kernels [width, out, in] in F32
    unit("a.gen.wav.pre_conv.weight", [3, Q, C]),
    zeros("a.gen.wav.pre_conv.bias", [C]),
    unit("a.gen.wav.tfm.in_proj.weight", [C, H]),
    zeros("a.gen.wav.tfm.in_proj.bias", [H]),
    unit("a.gen.wav.tfm.out_proj.weight", [H, C]),
    zeros("a.gen.wav.tfm.out_proj.bias", [C]),
    ones("a.gen.wav.tfm.output_norm.weight", H),
  );
  for (let i = 0; i < WAV_LAYERS; i++) {
    const blk = `a.gen.wav.tfm.blk.${i}`;
    tensors.push(
      ones(`${blk}.ln1.weight`, H),
      unit(`${blk}.attn_q.weight`, [H, H]),
      unit(`${blk}.attn_k.weight`, [H, H]),
      unit(`${blk}.attn_v.weight`, [H, H]),
      unit(`${blk}.attn_out.weight`, [H, H]),
      ones(`${blk}.ls1.weight`, H),
      ones(`${blk}.ln2.weight`, H),
      unit(`${blk}.ffn_gate.weight`, [H, shape.transformerFf]),
      unit(`${blk}.ffn_up.weight`, [H, shape.transformerFf]),
      unit(`${blk}.ffn_down.weight`, [shape.transformerFf, H]),
      ones(`${blk}.ls2.weight`, H),
    );
  }
  for (let i = 0; i < WAV_UPSAMPLE_BLOCKS; i++) {
    const blk = `a.gen.wav.up.blk.${i}`;
    const inChannels = i === 0 ? C : U;
    tensors.push(
      unit32(`${blk}.conv.weight`, [2, U, inChannels], inChannels),
      zeros(`${blk}.conv.bias`, [U]),
      unit(`${blk}.dwconv.weight`, [7, 1, U]),
      zeros(`${blk}.dwconv.bias`, [U]),
      ones(`${blk}.norm.weight`, U),
      zeros(`${blk}.norm.bias`, [U]),
      unit(`${blk}.pw1.weight`, [U, 4 * U]),
      zeros(`${blk}.pw1.bias`, [4 * U]),
      unit(`${blk}.pw2.weight`, [4 * U, U]),
      zeros(`${blk}.pw2.bias`, [U]),
      ones(`${blk}.gamma`, U),
    );
  }
  tensors.push(unit("a.gen.wav.dac.entry.weight", [7, U, A]), zeros("a.gen.wav.dac.entry.bias", [A]));
  DAC_STRIDES.forEach((stride, i) => {
    const blk = `a.gen.wav.dac.blk.${i}`;
    // SnakeBeta parameters are stored folded (exp(alpha), 1/exp(beta)): ones are alpha = beta = 0
    tensors.push(
      ones(`${blk}.snake.alpha`, A),
      ones(`${blk}.snake.beta`, A),
      unit32(`${blk}.conv.weight`, [2 * stride, A, A], 2 * A),
      zeros(`${blk}.conv.bias`, [A]),
    );
    for (let r = 0; r < DAC_RESIDUAL_UNITS; r++) {
      const res = `${blk}.res.${r}`;
      tensors.push(
        ones(`${res}.act1.alpha`, A),
        ones(`${res}.act1.beta`, A),
        unit(`${res}.conv1.weight`, [7, A, A]),
        zeros(`${res}.conv1.bias`, [A]),
        ones(`${res}.act2.alpha`, A),
        ones(`${res}.act2.beta`, A),
        unit(`${res}.conv2.weight`, [1, A, A]),
        zeros(`${res}.conv2.bias`, [A]),
      );
    }
  });
  tensors.push(
    ones("a.gen.wav.dac.post_snake.alpha", A),
    ones("a.gen.wav.dac.post_snake.beta", A),
    // the last conv scales down: unit gain all the way saturates the PCM (a square wave at ±1)
    randomTensor(name, "a.gen.wav.dac.post_conv.weight", [7, A, 1], { std: OUTPUT_GAIN / Math.sqrt(7 * A) }),
    zeros("a.gen.wav.dac.post_conv.bias", [1]),
  );
  return { metadata, tensors };
}

/** The ECAPA-TDNN speaker encoder (models/qwen3tts-spkenc.cpp): conv kernels [width, in, out]. */
function speakerEncoderTensors(name: string, shape: Qwen3ttsProjectorShape) {
  const { random, zeros } = weightMakers(name);
  const C = shape.speakerChannels;
  const branch = C / RES2NET_SCALE;
  const M = shape.speakerAggregate;
  const conv = (tensorName: string, width: number, inChannels: number, outChannels: number) =>
    [random(`${tensorName}.weight`, [width, inChannels, outChannels]), zeros(`${tensorName}.bias`, [outChannels])];
  const tensors = [...conv("a.conv1d.0", 5, SPEAKER_MELS, C)];
  for (let bid = 1; bid <= SPEAKER_BLOCKS; bid++) {
    tensors.push(...conv(`a.blk.${bid}.conv_pw1`, 1, C, C));
    for (let xid = 0; xid < RES2NET_SCALE - 1; xid++) tensors.push(...conv(`a.blk.${bid}.res2.${xid}`, 3, branch, branch));
    tensors.push(...conv(`a.blk.${bid}.conv_pw2`, 1, C, C), ...conv(`a.blk.${bid}.se_conv1`, 1, C, shape.speakerSe), ...conv(`a.blk.${bid}.se_conv2`, 1, shape.speakerSe, C));
  }
  tensors.push(
    ...conv("a.conv_out", 1, SPEAKER_BLOCKS * C, M),
    ...conv("a.asp_tdnn", 1, 3 * M, shape.speakerAttention),
    ...conv("a.asp_attn", 1, shape.speakerAttention, M),
    ...conv("mm.a.fc", 1, 2 * M, shape.talkerEmbd),
  );
  return tensors;
}
