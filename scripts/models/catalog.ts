// Every model the generator can make: tiny ones for tests, benchmark shapes (big) for `--bench`.
import { createHash } from "node:crypto";
import { bertModel, type BertShape } from "./bert.ts";
import { clipProjector, type ClipShape } from "./clip.ts";
import { audioProjector, type AudioProjectorShape } from "./audio-projector.ts";
import { type ModelContent } from "./common.ts";
import { lfm2Model, type Lfm2Shape } from "./lfm2.ts";
import { llamaModel, type LlamaShape } from "./llama.ts";
import { lfm2Lora, llamaLora } from "./lora.ts";
import { pocketttsBackbone, pocketttsProjector, pocketttsTokenizer, type PocketttsProjectorShape, type PocketttsShape } from "./pockettts.ts";
import { qwen3ttsBackbone, qwen3ttsProjector, qwen3ttsTokenizer, type Qwen3ttsProjectorShape, type Qwen3ttsShape } from "./qwen3tts.ts";
import { CHATML_HERMES_TEMPLATE, CHATML_HERMES_THINK_TEMPLATE, LFM2_ORIGINAL_TEMPLATE, LFM2_TEMPLATE, LFM25_INSTRUCT_TEMPLATE, LLAMA3_TEMPLATE } from "./templates.ts";
import { BERT_TOKENIZER, LLAMA3_TOKENIZER, QWEN_TOKENIZER, type TokenizerSpec, buildTokenizer, lfm2Tokenizer } from "./tokenizers.ts";

/** Bump when a change to the generator code changes the bytes it writes (spec changes are hashed anyway). */
const GENERATOR_VERSION = 1;

export const TINY_MODEL_NAMES = [
  "tiny-llama", "tiny-lfm2", "tiny-lfm2moe", "tiny-bert", "tiny-lfm2-ollama", "tiny-mmproj", "tiny-llama-lora", "tiny-llama-think",
  // per-request LoRA adapters: a second one for tiny-llama, and one made for another architecture
  "tiny-llama-lora-b", "tiny-lfm2-lora",
  // speculative decoding: draft models with their target's tokenizer
  "tiny-llama-draft", "tiny-lfm2-draft",
  // LFM2 with the original templates published GGUFs carry
  "tiny-lfm2-original", "tiny-lfm25",
  // reranking and audio input
  "tiny-bert-rerank", "tiny-audio-mmproj",
  // coding agents: a long trained context, a tool template and replies that end after a few words
  "tiny-llama-agent", "tiny-lfm2-agent",
  // speech output: Qwen3-TTS (backbone and its audio-generation projector)
  "tiny-qwen3tts", "tiny-qwen3tts-mmproj",
  // speech output: Pocket TTS (backbone and its flow net, mimi decoder and voice encoder)
  "tiny-pockettts", "tiny-pockettts-mmproj",
] as const;
export const BENCH_MODEL_NAMES = [
  "lfm2-350m",
  "lfm2-350m-q4_0",
  "lfm2-350m-q8_0",
  "llama-1b",
  "llama-1b-q4_0",
  "llama-1b-q8_0",
  // speculative decoding: small drafts with the benchmark shapes' vocabularies
  "lfm2-350m-draft",
  "lfm2-350m-draft-q4_0",
  "llama-1b-draft",
  "llama-1b-draft-q4_0",
] as const;
export const MODEL_NAMES = [...TINY_MODEL_NAMES, ...BENCH_MODEL_NAMES] as const;

export type TinyModelName = (typeof TINY_MODEL_NAMES)[number];
export type BenchModelName = (typeof BENCH_MODEL_NAMES)[number];
export type ModelName = (typeof MODEL_NAMES)[number];
export type QuantizationType = "Q4_0" | "Q8_0";

export interface GeneratedRecipe {
  kind: "generated";
  name: ModelName;
  description: string;
  /** short content hash of everything that decides the file's bytes: names the cache file */
  fingerprint: string;
  build(): ModelContent;
}

export interface QuantizedRecipe {
  kind: "quantized";
  name: ModelName;
  description: string;
  fingerprint: string;
  source: ModelName;
  type: QuantizationType;
}

export type ModelRecipe = GeneratedRecipe | QuantizedRecipe;

function fingerprintOf(value: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify({ generator: GENERATOR_VERSION, value }))
    .digest("hex")
    .slice(0, 8);
}

function generated<S>(
  name: ModelName,
  description: string,
  shape: S,
  tokenizer: TokenizerSpec,
  build: (name: string, description: string, shape: S, tokenizer: ReturnType<typeof buildTokenizer>) => ModelContent,
): GeneratedRecipe {
  return {
    kind: "generated",
    name,
    description,
    fingerprint: fingerprintOf({ name, shape, tokenizer }),
    build: () => build(name, description, shape, buildTokenizer(tokenizer)),
  };
}

/**
 * A file without a tokenizer (a projector with its own GGUF architecture, `clip`, or a LoRA adapter).
 * `revision` changes the fingerprint when the builder's output changes with the shape unchanged.
 */
function tokenizerless<S>(
  name: ModelName, description: string, shape: S,
  build: (name: string, description: string, shape: S) => ModelContent, revision?: number,
): GeneratedRecipe {
  const fingerprint = fingerprintOf(revision === undefined ? { name, shape } : { name, shape, revision });
  return { kind: "generated", name, description, fingerprint, build: () => build(name, description, shape) };
}

function quantized(name: ModelName, source: GeneratedRecipe, type: QuantizationType): QuantizedRecipe {
  return {
    kind: "quantized",
    name,
    description: `${source.description}, quantized to ${type} by llama.cpp`,
    fingerprint: fingerprintOf({ source: source.fingerprint, type }),
    source: source.name,
    type,
  };
}

// Tiny models have their own output.weight: with a tied one, a random model's strongest logit is the
// embedding of its last input token, so greedy decoding repeats that token forever.
const tinyLlamaShape: LlamaShape = {
  nEmbd: 64,
  nLayer: 2,
  nHead: 4,
  nHeadKv: 2,
  nFf: 128,
  nCtx: 4096,
  ropeFreqBase: 1_000_000,
  rmsEps: 1e-6,
  tiedOutput: false,
};

const tinyLfm2Shape: Lfm2Shape = {
  nEmbd: 64,
  nLayer: 6,
  attentionLayers: [2, 5],
  nHead: 4,
  nHeadKv: 2,
  nFf: 128,
  nCtx: 4096,
  convLength: 3,
  ropeFreqBase: 1_000_000,
  rmsEps: 1e-5,
  tiedOutput: false,
};

const tinyLfm2MoeShape: Lfm2Shape = {
  ...tinyLfm2Shape,
  moe: { nExpert: 4, nExpertUsed: 2, nFfExpert: 32, leadingDenseLayers: 2 },
};

const tinyBertShape: BertShape = { nEmbd: 64, nLayer: 2, nHead: 4, nFf: 128, nCtx: 512, normEps: 1e-12, poolingType: 1 };
// The same encoder as a reranker: rank pooling over a classifier head.
const tinyBertRerankShape: BertShape = { ...tinyBertShape, poolingType: 4, classifier: true };

// 56x56 images in 14-pixel patches: 16 image tokens, projected into the 64-wide tiny text models.
const tinyProjectorShape: ClipShape = { imageSize: 56, patchSize: 14, nEmbd: 32, nFf: 64, nLayer: 2, nHead: 4, projectionDim: 64, normEps: 1e-5 };

// A two-layer 32-wide Whisper encoder over 128 mel bins, projected into the 64-wide tiny text models.
const tinyAudioProjectorShape: AudioProjectorShape = { nEmbd: 32, nFf: 64, nLayer: 2, nHead: 4, projectionDim: 64, normEps: 1e-5, nMel: 128 };

const lfm2_350mShape: Lfm2Shape = {
  nEmbd: 1024,
  nLayer: 16,
  attentionLayers: [2, 5, 8, 10, 12, 14],
  nHead: 16,
  nHeadKv: 8,
  nFf: 4608,
  nCtx: 128_000,
  convLength: 3,
  ropeFreqBase: 1_000_000,
  rmsEps: 1e-5,
  tiedOutput: true,
};

const llama1bShape: LlamaShape = {
  nEmbd: 2048,
  nLayer: 16,
  nHead: 32,
  nHeadKv: 8,
  nFf: 8192,
  nCtx: 131_072,
  ropeFreqBase: 500_000,
  rmsEps: 1e-5,
  tiedOutput: true,
};

const lfm2Chat = { ...lfm2Tokenizer(), chatTemplate: LFM2_TEMPLATE };

const tinyRecipes: GeneratedRecipe[] = [
  generated(
    "tiny-llama",
    "Tiny random-weight llama model with the Qwen2 tokenizer and a ChatML/Hermes tool template",
    tinyLlamaShape,
    { ...QWEN_TOKENIZER, chatTemplate: CHATML_HERMES_TEMPLATE },
    llamaModel,
  ),
  generated("tiny-lfm2", "Tiny random-weight LFM2 hybrid (short-conv + attention) model", tinyLfm2Shape, lfm2Chat, lfm2Model),
  generated("tiny-lfm2moe", "Tiny random-weight LFM2 mixture-of-experts model", tinyLfm2MoeShape, lfm2Chat, lfm2Model),
  generated("tiny-bert", "Tiny random-weight BERT embedding model (mean pooling)", tinyBertShape, BERT_TOKENIZER, bertModel),
  generated(
    "tiny-lfm2-ollama",
    "Tiny LFM2 model named as GGUFs published for Ollama (output_norm.weight, wrong feed_forward_length): needs the store's repair",
    { ...tinyLfm2Shape, ollamaNaming: true },
    lfm2Chat,
    lfm2Model,
  ),
  tokenizerless("tiny-mmproj", "Tiny random-weight LLaVA-type vision projector for the 64-wide tiny text models", tinyProjectorShape, clipProjector),
  generated("tiny-bert-rerank", "Tiny random-weight BERT reranker (rank pooling over a classifier head)", tinyBertRerankShape, BERT_TOKENIZER, bertModel),
  tokenizerless("tiny-audio-mmproj", "Tiny random-weight Qwen2-Audio-type (Whisper encoder) audio projector for the 64-wide tiny text models", tinyAudioProjectorShape, audioProjector),
  tokenizerless("tiny-llama-lora", "Tiny random-weight LoRA adapter (rank 4) for tiny-llama's attention and FFN", { base: tinyLlamaShape, rank: 4, alpha: 8 }, llamaLora),
  tokenizerless("tiny-llama-lora-b", "A second tiny random-weight LoRA adapter (rank 8) for tiny-llama's attention and FFN", { base: tinyLlamaShape, rank: 8, alpha: 16 }, llamaLora),
  tokenizerless("tiny-lfm2-lora", "Tiny random-weight LoRA adapter (rank 4) for tiny-lfm2's FFN", { base: tinyLfm2Shape, rank: 4, alpha: 8 }, lfm2Lora),
  // A reasoning model for the Responses and Messages APIs: its template opens <think>, so random weights reason until cut off.
  generated(
    "tiny-llama-think",
    "Tiny random-weight llama model whose ChatML/Hermes template opens <think> reasoning (enable_thinking)",
    tinyLlamaShape,
    { ...QWEN_TOKENIZER, chatTemplate: CHATML_HERMES_THINK_TEMPLATE },
    llamaModel,
  ),
  // The templates of published LFM2 GGUFs, verbatim: their tool-call syntax must be recognised as llama.cpp does.
  generated(
    "tiny-lfm2-original",
    "Tiny LFM2 model with the original LFM2 chat template (tool list tokens, no <|tool_call_start|> in it)",
    tinyLfm2Shape,
    { ...lfm2Tokenizer(), chatTemplate: LFM2_ORIGINAL_TEMPLATE },
    lfm2Model,
  ),
  generated(
    "tiny-lfm25",
    "Tiny LFM2 model with LFM2.5 Instruct's chat template (\"List of tools: [\" without list tokens)",
    tinyLfm2Shape,
    { ...lfm2Tokenizer(), chatTemplate: LFM25_INSTRUCT_TEMPLATE },
    lfm2Model,
  ),
];

// What agents need of a model: 64k tokens of trained context (their first request alone is 10-25k
// tokens), a tool template, and replies that end after a few words whatever max_tokens they ask for.
const tinyAgentShape: LlamaShape = {
  ...tinyLlamaShape,
  nCtx: 65_536,
  shortReplies: {
    words: ["the", "model", "is", "a", "local", "reply", "to", "your", "question", "and", "it", "works", "here", "with", "tools", "files",
      "code", "test", "server", "context", "of", "in", "on", "for", "this", "that", "we", "can", "run", "read", "write", "done"],
    endToken: "<|im_end|>",
    endWeight: 0.15,
  },
};
tinyRecipes.push(generated(
  "tiny-llama-agent",
  "Tiny random-weight llama model for coding agents: 64k trained context, ChatML/Hermes tool template, replies of a few words",
  tinyAgentShape,
  { ...QWEN_TOKENIZER, chatTemplate: CHATML_HERMES_TEMPLATE },
  llamaModel,
));

// A hybrid model for agents' prompts: tiny LFM2 with the agent model's context and tool template.
tinyRecipes.push(generated(
  "tiny-lfm2-agent",
  "Tiny random-weight LFM2 hybrid model for coding agents: 64k trained context, ChatML/Hermes tool template",
  { ...tinyLfm2Shape, nCtx: 65_536 },
  { ...lfm2Tokenizer(), chatTemplate: CHATML_HERMES_TEMPLATE },
  lfm2Model,
));

// Qwen3-TTS, 64 wide: head size 32, so the M-RoPE sections sum to 16.
const tinyQwen3ttsShape: Qwen3ttsShape = { nEmbd: 64, nLayer: 2, nHead: 2, nHeadKv: 1, nFf: 128, nCtx: 4096, ropeSections: [6, 5, 5, 0] };
const tinyQwen3ttsProjectorShape: Qwen3ttsProjectorShape = {
  talkerEmbd: 64, predictorEmbd: 32, predictorLayers: 1, predictorHeads: 2, predictorHeadsKv: 1, predictorHeadDim: 16, predictorFf: 64,
  acousticCodes: 64, codebookDim: 16, quantizerOut: 32, preConvOut: 32, transformerHeadDim: 4, transformerFf: 64, upsampleChannels: 8, dacChannels: 4,
  speakerChannels: 16, speakerSe: 8, speakerAggregate: 24, speakerAttention: 8,
};
tinyRecipes.push(
  generated("tiny-qwen3tts", "Tiny random-weight Qwen3-TTS backbone (talker) with the Qwen2 vocabulary and the codec tokens",
    tinyQwen3ttsShape, qwen3ttsTokenizer(), qwen3ttsBackbone),
  // revision 3: the file's description is the recipe's (2: the decoders' output gain)
  tokenizerless("tiny-qwen3tts-mmproj", "Tiny random-weight Qwen3-TTS audio-generation projector (code predictor and code2wav) for tiny-qwen3tts",
    tinyQwen3ttsProjectorShape, qwen3ttsProjector, 3),
);

const tinyPocketttsShape: PocketttsShape = { nEmbd: 64, nLayer: 2, nHead: 2, nFf: 128, nCtx: 4096 };
const tinyPocketttsProjectorShape: PocketttsProjectorShape = {
  talkerEmbd: 64, mimiEmbd: 32, mimiHeads: 2, mimiFf: 64, mimiLayers: 1, seanetChannels: 32, flowEmbd: 32, flowBlocks: 1, timeFrequencies: 16,
};
tinyRecipes.push(
  generated("tiny-pockettts", "Tiny random-weight Pocket TTS backbone with a SentencePiece vocabulary and the audio start token",
    tinyPocketttsShape, pocketttsTokenizer(), pocketttsBackbone),
  // revision 3: the file's description is the recipe's (2: the decoders' output gain)
  tokenizerless("tiny-pockettts-mmproj", "Tiny random-weight Pocket TTS projector (flow net, mimi decoder, voice encoder) for tiny-pockettts",
    tinyPocketttsProjectorShape, pocketttsProjector, 3),
);

const lfm2_350m = generated(
  "lfm2-350m",
  "Random-weight model with the LFM2-350M shape",
  lfm2_350mShape,
  { ...lfm2Tokenizer(65536), chatTemplate: LFM2_TEMPLATE },
  lfm2Model,
);
const llama1b = generated(
  "llama-1b",
  "Random-weight model with the Llama-3.2-1B shape",
  llama1bShape,
  { ...LLAMA3_TOKENIZER, chatTemplate: LLAMA3_TEMPLATE },
  llamaModel,
);

// ---- speculative decoding: drafts (same tokenizer as their target, much smaller) ----
const tinyLlamaDraftShape: LlamaShape = { ...tinyLlamaShape, nEmbd: 32, nLayer: 1, nHead: 2, nHeadKv: 1, nFf: 64 };
const tinyLfm2DraftShape: Lfm2Shape = { ...tinyLfm2Shape, nEmbd: 32, nLayer: 3, attentionLayers: [1], nHead: 2, nHeadKv: 1, nFf: 64 };
tinyRecipes.push(
  generated("tiny-llama-draft", "Tiny random-weight llama draft model for tiny-llama (same tokenizer)", tinyLlamaDraftShape,
    { ...QWEN_TOKENIZER, chatTemplate: CHATML_HERMES_TEMPLATE }, llamaModel),
  generated("tiny-lfm2-draft", "Tiny random-weight LFM2 draft model for tiny-lfm2 (same tokenizer)", tinyLfm2DraftShape, lfm2Chat, lfm2Model),
);
const lfm2DraftShape: Lfm2Shape = { ...lfm2_350mShape, nEmbd: 256, nLayer: 4, attentionLayers: [1, 3], nHead: 4, nHeadKv: 2, nFf: 1024 };
const llamaDraftShape: LlamaShape = { ...llama1bShape, nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, nFf: 1024 };
const lfm2Draft = generated("lfm2-350m-draft", "Random-weight small LFM2 draft with the LFM2-350M vocabulary",
  lfm2DraftShape, { ...lfm2Tokenizer(65536), chatTemplate: LFM2_TEMPLATE }, lfm2Model);
const llamaDraft = generated("llama-1b-draft", "Random-weight small llama draft with the Llama-3.2-1B vocabulary",
  llamaDraftShape, { ...LLAMA3_TOKENIZER, chatTemplate: LLAMA3_TEMPLATE }, llamaModel);
const draftRecipes: ModelRecipe[] = [
  lfm2Draft, quantized("lfm2-350m-draft-q4_0", lfm2Draft, "Q4_0"),
  llamaDraft, quantized("llama-1b-draft-q4_0", llamaDraft, "Q4_0"),
];

const recipes: ModelRecipe[] = [
  ...tinyRecipes,
  lfm2_350m,
  quantized("lfm2-350m-q4_0", lfm2_350m, "Q4_0"),
  quantized("lfm2-350m-q8_0", lfm2_350m, "Q8_0"),
  llama1b,
  quantized("llama-1b-q4_0", llama1b, "Q4_0"),
  quantized("llama-1b-q8_0", llama1b, "Q8_0"),
  ...draftRecipes,
];

export const MODEL_RECIPES: ReadonlyMap<ModelName, ModelRecipe> = new Map(recipes.map((r) => [r.name, r]));

export function isModelName(name: string): name is ModelName {
  return MODEL_RECIPES.has(name as ModelName);
}
