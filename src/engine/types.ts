// The engine's one internal request shape and the events it streams back. Every profile translates
// its wire format into GenerateRequest and renders EngineEvents; the engine knows no profile.
import type { SpeculativeOptions } from "./speculative/options.ts";
import type { PromptCacheStats } from "./prompt-cache/host-cache.ts";
import type { DiskStoreStats } from "./prompt-cache/disk-store.ts";
import type { KvEventsConfig } from "./kv-events/kv-events-config.ts";

/**
 * One image of a request as the engine takes it: the bytes of a file libmtmd decodes itself (JPEG, PNG,
 * BMP, GIF), or pixels decoded elsewhere (WebP) as packed 8-bit RGB, row by row.
 */
export type EngineImage =
  | { kind: "file"; bytes: Uint8Array }
  | { kind: "rgb"; width: number; height: number; pixels: Uint8Array }
  /** An audio file (WAV, MP3, FLAC) for a projector with an audio encoder: media like an image. */
  | { kind: "audio"; bytes: Uint8Array };

// The sampler settings are the bindings' type (ffi/ builds the native chain from them); requests carry them.
export type { SamplerSettings } from "../../ffi/sampler-settings.ts";
import type { SamplerSettings } from "../../ffi/sampler-settings.ts";

/**
 * What the scheduler may know of a request beyond its tokens: facts, never wire names. The server fills
 * them from headers and fields (Claude Code's X-Claude-Code-Session-Id, Codex's session_id, OpenAI's
 * prompt_cache_key or user; the API key's name; vLLM's priority).
 */
export interface RequestSchedule {
  /** The conversation or agent session the request continues: which cached states to keep, where its next turn is looked up. */
  session?: string;
  /** The name of the key that sent it (fair turns between keys); unset: the anonymous owner. */
  owner?: string;
  /** vLLM's priority: lower goes first among one owner's waiting requests. Default 0. */
  priority?: number;
  /** The owner's share of sequences against other owners' when several wait (a key's weight). Default 1. */
  weight?: number;
  /** Most sequences the owner's requests may hold at once (a key's --max-parallel). Default: no cap. */
  maxParallel?: number;
}

/** A request's prompt alone: its text or tokens, its media, and how the text is tokenized. */
export type PromptInput = Pick<GenerateRequest, "prompt" | "images" | "addSpecial" | "parseSpecial">;

export interface GenerateRequest {
  /** Unique per runner; the parent assigns it. */
  id: string;
  /** Session, owner and priority, for admission and the prompt cache. */
  schedule?: RequestSchedule;
  /**
   * The LoRA adapter to run with, by the name it was loaded under (EngineOptions.lora, Engine.loadAdapter);
   * unset: the base model (with the Modelfile's adapters, which apply to every request).
   */
  adapter?: string;
  /** Text (tokenized by the engine) or token ids. */
  prompt: string | number[];
  /**
   * Images of a text prompt, in the order of the media markers (ModelInfo.vision.mediaMarker) that
   * stand for them in the text. Needs a model loaded with a projector.
   */
  images?: EngineImage[];
  /** Add BOS/EOS as the vocabulary asks. Default: true. */
  addSpecial?: boolean;
  /** Let text like "<|im_start|>" become control tokens (rendered chat templates). Default: true. */
  parseSpecial?: boolean;
  /** Most tokens to generate; undefined or negative means until the context is full. */
  maxTokens?: number;
  stop?: string[];
  /** Put the matched stop string at the end of the output (vLLM include_stop_str_in_output). */
  includeStopString?: boolean;
  /** Keep generating past end-of-generation tokens. */
  ignoreEos?: boolean;
  /** Tokens that end generation like EOS does (vLLM stop_token_ids); they are not part of the output. */
  stopTokenIds?: number[];
  /** End-of-generation tokens cannot be sampled before this many tokens (vLLM min_tokens). */
  minTokens?: number;
  /** Report each token's log-probability and this many top alternatives (0: the token's only). */
  logprobs?: number;
  /**
   * Scoring instead of sampling: the output is these tokens, one after another (end-of-generation tokens
   * included), each reported with its log-probability under the model given the prompt and the tokens
   * before it (as with `logprobs`, which it implies); the request ends after the last. maxTokens, stop
   * strings and the sampler do not apply.
   */
  forcedTokens?: number[];
  /** Write special tokens (such as "<|im_end|>") into the output text instead of leaving them out. Default: only under a grammar. */
  renderSpecialTokens?: boolean;
  sampling?: Partial<SamplerSettings>;
  /**
   * Most draft tokens per step for this request when the engine speculates (Ollama's draft_num_predict);
   * 0 turns speculation off for it. Default: the engine's maxDraftTokens, which also caps it.
   */
  draftTokens?: number;
  /**
   * Report prompt progress after every step that processes this prompt, even one that fits a single
   * step. Without it, progress is reported only for prompts that span several steps (a keep-alive).
   */
  promptProgress?: boolean;
}

export type FinishReason = "stop" | "length" | "cancelled";

export interface TokenLogprob { token: number; text: string; logprob: number }
export interface TokenLogprobs extends TokenLogprob { top: TokenLogprob[] }

export interface RequestUsage {
  promptTokens: number;
  /** Prompt tokens taken from a cached prefix instead of being processed. */
  cachedPromptTokens: number;
  completionTokens: number;
  /** From submission to the first generated token (queue wait included). */
  timeToFirstTokenMs: number;
  /** Time spent in steps that processed this request's prompt. */
  promptMs: number;
  /** From the first generated token to the end. */
  decodeMs: number;
  /** Time waiting for a free sequence. */
  queueMs: number;
  /** Set when the engine speculates: tokens drafted for this request, and how many of them it kept (each saved a decode step). */
  draftTokens?: number;
  acceptedDraftTokens?: number;
}

export type EngineErrorCode =
  | "busy" | "invalid_request" | "context_overflow" | "engine_failure" | "engine_exited"
  /** an RPC server cannot be reached or does not answer in time (503) */
  | "rpc_unavailable"
  /** an RPC server answered out of protocol, or the engine using it ended (502) */
  | "rpc_failure";

/**
 * After a step that processed part of a prompt: `processed` of its `total` positions are in the
 * sequence's memory, `cached` of them were reused rather than processed; `ms` since the request was
 * admitted. The prompt is done when processed equals total.
 */
export interface PromptProgressEvent { type: "progress"; id: string; processed: number; total: number; cached: number; ms: number }

/** Whether the event ends its request's stream (progress and token events do not). */
export const isFinalEvent = (event: EngineEvent): event is Extract<EngineEvent, { type: "done" | "error" }> =>
  event.type === "done" || event.type === "error";

export type EngineEvent =
  | { type: "token"; id: string; token: number; text: string; logprobs?: TokenLogprobs }
  | PromptProgressEvent
  | { type: "done"; id: string; finishReason: FinishReason; stop?: string; stopToken?: number; usage: RequestUsage }
  | { type: "error"; id: string; code: EngineErrorCode; message: string };

export interface EngineOptions {
  modelPath: string;
  /** A vision projector (mmproj GGUF) to load with the model: requests may then carry images. */
  projectorPath?: string;
  /** Parallel sequences sharing one context. Default: 4. */
  parallel?: number;
  /** Context per sequence in tokens; default min(4096, trained context), less when memory is short. */
  contextPerSequence?: number;
  /**
   * Tokens of memory all sequences share (llama.cpp's unified KV cache): a long sequence uses what idle
   * ones leave, so a large context per sequence need not be paid for `parallel` times. Default:
   * contextPerSequence × parallel; never less than contextPerSequence.
   */
  sharedContext?: number;
  /** Most tokens per decode step. Default: 512. */
  batchSize?: number;
  /** Decode threads; default: physical cores. */
  threads?: number;
  gpuLayers?: number;
  /** vLLM's --gpu-memory-utilization: the share of GPU memory the model's layers may fill (used when gpuLayers is unset). */
  gpuMemoryFraction?: number;
  /**
   * RPC servers (host:port) whose devices take part of the layers (`gpuLayers` of them when set, else a
   * share by free memory); the rest stay on this machine.
   */
  rpcServers?: string[];
  /** A chat template that replaces the model's own (vLLM --chat-template). */
  chatTemplate?: string;
  /** Requests waiting for a free sequence before new ones are refused as busy. Default: 512. */
  queueLimit?: number;
  flashAttention?: "auto" | "on" | "off";
  /** Type of the KV cache's keys and values (Ollama's OLLAMA_KV_CACHE_TYPE). Default: f16. */
  kvCacheType?: "f16" | "q8_0" | "q4_0" | "f32";
  /** Load as an embedding model (pooled embeddings instead of generation). */
  embeddings?: boolean;
  /** With embeddings: pool with the classifier head's score (a reranker, llama.cpp's --pooling rank). */
  rank?: boolean;
  /** LoRA adapter GGUFs applied at full scale to every request (Modelfile ADAPTER). */
  loraAdapters?: string[];
  /**
   * LoRA adapters per request (vLLM's --enable-lora): those loaded with the model (--lora-modules; more
   * come and go with Engine.loadAdapter and unloadAdapter), how many adapters may hold sequences at once
   * (--max-loras, default 1) and the largest rank loaded (--max-lora-rank, default 16).
   */
  lora?: { modules?: LoraModule[]; maxLoras?: number; maxRank?: number };
  /** Speculative decoding: a draft model or n-gram lookup proposes tokens the model verifies in one step. */
  speculative?: SpeculativeOptions;
  /**
   * Host memory in MiB for the states of sequences handed to other requests, restored when a later prompt
   * starts with their tokens (llama-server's --cache-ram). 0: none. Default: DEFAULT_CACHE_RAM_MIB, at most
   * a quarter of the machine's memory.
   */
  cacheRamMiB?: number;
  /**
   * The disk tier of the prompt cache: a directory every engine shares and the MiB all of it may take.
   * States that leave a sequence or host memory are written there and found again after a restart.
   * Unset (or 0 MiB, or no host cache): none. Servers turn it on by default (--cache-disk, --cache-disk-mib).
   */
  cacheDisk?: { dir: string; limitMiB: number };
  /** Publish KV-cache events in vLLM's format (--kv-events-config); attention-only models. */
  kvEvents?: KvEventsConfig;
}

/** A LoRA adapter GGUF requests name as GenerateRequest.adapter. */
export interface LoraModule {
  name: string;
  path: string;
}

/** A pooled embedding: L2-normalised, with its input's token count and its length before normalising. */
export interface EmbedResult {
  embedding: number[];
  tokens: number;
  norm: number;
}

/** A reranker's relevance score for each document (in the order given) and each query+document pair's token count. */
export interface RankResult {
  scores: number[];
  tokens: number[];
}

/** Load of one engine, for metrics: sequences in use, requests waiting, and memory cells holding tokens. */
export interface EngineStats {
  running: number;
  waiting: number;
  /** Tokens held in the context's memory over all sequences (cached prefixes included). */
  usedTokens: number;
  /**
   * Cells the running sequences hold (counted once where they share them). Idle sequences' cached prefixes
   * are left out: they are dropped whenever a running one needs room, as vLLM's freed prefix blocks are.
   * Absent from an engine that does not count them; usedTokens stands in then.
   */
  activeTokens?: number;
  capacityTokens: number;
  /** llama_decode calls since the engine started, and the tokens they took: batching shows as tokens per step. */
  decodeSteps: number;
  decodedTokens: number;
  /** Audio frames a speech model made since the engine started (a speech engine only): a stopped speech stops adding. */
  speechFrames?: number;
  /** Images run through the vision encoder (an image seen again is taken from the cache, not counted). */
  imageEncodes: number;
  /** Speculative decoding since the engine started: tokens drafted and accepted (0 without speculation). */
  draftTokens: number;
  acceptedDraftTokens: number;
  /** Tokens per ms of recent steps with drafts over steps without, by number of generating sequences (those seen both ways). */
  draftStepYield?: Record<number, number>;
  /**
   * ms of decode steps since the engine started: in llama_decode, in sampling (each sequence's chain, stop
   * strings, the token event), and in all (the batch, cache bookkeeping and drafts too).
   */
  stepMs?: { decode: number; sample: number; total: number };
  /** Prompt tokens taken from another sequence's cells (copied inside the KV cache) since the engine started. */
  copiedPrefixTokens: number;
  /** Prompts that gave their sequence to a mostly cached request while being processed (vLLM's preemptions). */
  preemptions?: number;
  /** The host prompt cache (--cache-ram), when the engine has one. */
  promptCache?: PromptCacheStats;
  /** The disk tier of the prompt cache (--cache-disk), when the engine has one. */
  diskCache?: DiskStoreStats;
  /** LoRA adapters served per request (vLLM's --max-loras): the most one batch holds, and which run or wait now. */
  loraAdapters?: LoraAdapterStats;
}

export interface LoraAdapterStats {
  maxLoras: number;
  running: string[];
  waiting: string[];
}

export interface ModelInfo {
  path: string;
  architecture: string;
  description: string;
  trainedContextLength: number;
  /** Bytes of KV cache one token of context takes (all layers, keys and values). */
  kvBytesPerToken: number;
  contextPerSequence: number;
  /** Tokens of memory the sequences share (the KV cache's size); each holds at most contextPerSequence. */
  sharedContext: number;
  /** The sequences take their cells from one pool of sharedContext; else each has a stream of its own. */
  sharedKvPool: boolean;
  sequences: number;
  embeddingSize: number;
  parameterCount: number;
  sizeBytes: number;
  chatTemplate?: string;
  recurrentOrHybrid: boolean;
  vocabularySize: number;
  bosToken: number;
  eosToken: number;
  /** Text of the BOS/EOS tokens, as chat templates refer to them (bos_token, eos_token). */
  bosText: string;
  eosText: string;
  /** The vocabulary adds BOS when tokenizing a fresh prompt. */
  addsBos: boolean;
  /** Texts of the control tokens: in message content they are plain text, never these tokens. */
  controlTokenTexts: string[];
  threads: number;
  /** Loaded for embeddings rather than generation. */
  embeddings: boolean;
  /** A reranker: loaded for embeddings and its context pools with rank (a classifier head's score per sequence). */
  reranker: boolean;
  compute: string;
  metadata: Record<string, string>;
  /** Present when a vision projector is loaded: requests may carry images. */
  vision?: VisionInfo;
  /** Present when the engine speculates. */
  speculative?: { method: "draft" | "ngram"; draftModelPath?: string; maxDraftTokens: number };
  /** Present when the model (its backbone and audio-generation projector) speaks: EngineHandle.speak works. */
  speech?: SpeechInfo;
}

/** A text-to-speech model's pipeline (libmtmd's audio generation) and the PCM it produces. */
export interface SpeechInfo {
  pipeline: "qwen3tts" | "pockettts";
  /** Samples per second of the mono float PCM it produces. */
  sampleRate: number;
  /** The pipeline's model variant, where the projector names one. */
  variant?: string;
}

/** One text spoken by a speech model. */
export interface SpeechRequest {
  text: string;
  /** A language name the pipeline knows (Qwen3-TTS: "english", "chinese", …); unset: the pipeline's default. */
  language?: string;
  /** A reference voice: the bytes of a WAV, MP3 or FLAC file, decoded by libmtmd in the engine. */
  speaker?: Uint8Array;
  seed: number;
  topK?: number;
  topP?: number;
  temperature?: number;
  /** Most audio frames to generate; the speech ends there if the model has not ended it before. */
  maxFrames: number;
}

/**
 * How a speech ended: the model ended it, maxFrames was reached, the sequence reached the end of the
 * model's context (no position left for a frame), or the caller cancelled it.
 */
export type SpeechStopReason = "end" | "limit" | "context" | "cancelled";

export interface SpeechResult {
  frames: number;
  samples: number;
  promptTokens: number;
  stoppedBy: SpeechStopReason;
}

/** A speech being generated: PCM chunks as frames are decoded, then its result. */
export interface SpeechStream {
  /** Mono float PCM at info.speech.sampleRate, in order; ends when the speech does (throws its error). */
  chunks: AsyncIterable<Float32Array>;
  done: Promise<SpeechResult>;
}

export interface VisionInfo {
  projectorPath: string;
  /** The projector encodes images (mtmd_support_vision). */
  images: boolean;
  /** The projector encodes audio (mtmd_support_audio). */
  audio: boolean;
  /** The text standing for one image in a prompt; random per engine so that user text cannot forge one. */
  mediaMarker: string;
}

/** An error that carries an engine code, so each profile can render it in its own shape. */
export class EngineError extends Error {
  constructor(readonly code: EngineErrorCode, message: string) {
    super(message);
    this.name = "EngineError";
  }
}
