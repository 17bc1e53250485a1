// vLLM's offline API in TypeScript: `new LLM({ model })`, then `generate` (raw prompts) and `chat`
// (chat template applied) over whole batches. Every prompt of a call goes to the engine's scheduler at
// once, which decodes them together; results come back in input order.
import type { ChatMessage as TemplateMessage, ToolDefinition } from "../chat/types.ts";
import type { ChoiceStream } from "../generation/choices.ts";
import type { ChatOutputRequest } from "../generation/chat-output.ts";
import type { ChatSpec, PromptSpec } from "../generation/chat-spec.ts";
import { runChat } from "../generation/run-chat.ts";
import { runSpeech, speechFinishReason, type SpeechFinishReason } from "../generation/run-speech.ts";
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED, timeStretch } from "../audio/speech/time-stretch.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import type { RenderedPrompt } from "../generation/chat.ts";
import { toTemplateMessages, type ChatInputMessage } from "./chat-input.ts";
import { LocalModel } from "./local-model.ts";
import { ProgressBar } from "./progress-bar.ts";
import { SamplingParams, type SamplingParamsInit } from "./sampling-params.ts";
import { fromVllmSpeculativeConfig, type VllmSpeculativeConfig } from "../engine/speculative/vllm-config.ts";

export interface LLMOptions {
  /** A GGUF path, a model store name, or a Hugging Face `<org>/<model>` id. */
  model: string;
  /** Context per sequence in tokens. Default: min(4096, the model's trained context). */
  max_model_len?: number;
  /** Sequences decoded together. @default 8 */
  max_num_seqs?: number;
  /** Decode threads. Default: physical cores. */
  threads?: number;
  /** Layers offloaded to the GPU. Default: as many as fit. */
  n_gpu_layers?: number;
  /** A Jinja chat template that replaces the model's own. */
  chat_template?: string;
  /** Model store root for store names and pulls. */
  store_root?: string;
  /** A projector GGUF (vision, audio, or a text-to-speech model's audio generator) when none lies beside the model as mmproj-*.gguf. */
  mmproj?: string;
  /**
   * Speculative decoding, as vLLM's LLM(speculative_config=…): `{ model: DRAFT_GGUF, num_speculative_tokens: 4 }`
   * or `{ method: "ngram", num_speculative_tokens: 4, prompt_lookup_max: 4, prompt_lookup_min: 1 }`.
   */
  speculative_config?: VllmSpeculativeConfig;
}

export interface CompletionOutput {
  index: number;
  text: string;
  token_ids: number[];
  cumulative_logprob: null;
  logprobs: null;
  /** "stop" (end of generation or a stop string), "length" (max_tokens or context) or "abort". */
  finish_reason: "stop" | "length" | "abort";
  /** The stop string or stop token that ended it, else null. */
  stop_reason: string | number | null;
  /** With speculative decoding: tokens drafted for this output, and how many of them were accepted. */
  spec_decode?: { draft_tokens: number; accepted_tokens: number };
}

export interface RequestOutput {
  request_id: string;
  /** The prompt text (for chat, the rendered template). */
  prompt: string;
  prompt_token_ids: number[];
  outputs: CompletionOutput[];
  finished: boolean;
}

/** What LLM.speech takes besides the texts (a text-to-speech model: a projector that generates audio). */
export interface SpeechParams {
  seed?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  /** Most audio frames (12.5 a second); default and ceiling MAX_SPEECH_FRAMES. */
  max_frames?: number;
  /** 0.25 to 4: faster or slower without a change of pitch (Sonic). @default 1 */
  speed?: number;
  /** A language name the pipeline knows (Qwen3-TTS: "english", "chinese", …). */
  language?: string;
  /** A reference voice: a WAV, MP3 or FLAC file's bytes. */
  speaker?: Uint8Array;
}

export interface SpeechOutput {
  request_id: string;
  text: string;
  /** Mono float PCM in [-1, 1]. */
  samples: Float32Array;
  sample_rate: number;
  /** Audio frames the model made. */
  frames: number;
  /** "stop" (the model ended it), "length" (max_frames), "context" (the model's context was full) or "abort". */
  finish_reason: SpeechFinishReason;
}

export type PromptInput = string | { prompt: string } | { prompt_token_ids: number[] };
export type ChatInput = string | string[] | ChatInputMessage[] | ChatInputMessage[][];
type ParamsInput = SamplingParams | SamplingParamsInit | Array<SamplingParams | SamplingParamsInit>;

export interface BatchOptions {
  /** Show the "Processed prompts" bar on stderr when there are several prompts. @default true */
  progress?: boolean;
}

export interface ChatOptions extends BatchOptions {
  tools?: ToolDefinition[];
  /** @default true */
  add_generation_prompt?: boolean;
  continue_final_message?: boolean;
  /** Extra template variables, e.g. { enable_thinking: false }. */
  chat_template_kwargs?: Record<string, unknown>;
}

/** Prompts in flight at once: enough to keep every sequence busy, well under the engine's queue limit. */
const MAX_IN_FLIGHT = 256;
const DEFAULT_SEQUENCES = 8;

let nextRequestId = 0;

export class LLM {
  private readonly loaded: LocalModel;

  /** Returns at once; the model loads on the first call, so a load error surfaces there. */
  constructor(options: LLMOptions | string) {
    const o = typeof options === "string" ? { model: options } : options;
    this.loaded = new LocalModel(o.model, {
      parallel: o.max_num_seqs ?? DEFAULT_SEQUENCES,
      ...(o.max_model_len !== undefined ? { contextPerSequence: o.max_model_len } : {}),
      ...(o.threads !== undefined ? { threads: o.threads } : {}),
      ...(o.n_gpu_layers !== undefined ? { gpuLayers: o.n_gpu_layers } : {}),
      ...(o.chat_template !== undefined ? { chatTemplate: o.chat_template } : {}),
      ...(o.mmproj !== undefined ? { projectorPath: o.mmproj } : {}),
      ...(o.speculative_config ? { speculative: fromVllmSpeculativeConfig(o.speculative_config) } : {}),
    }, o.store_root ? { storeRoot: o.store_root } : {});
  }

  /** Completes raw prompts (no chat template): texts, or token ids as they are, through the one chat orchestrator. */
  async generate(prompts: PromptInput | PromptInput[], params?: ParamsInput, options: BatchOptions = {}): Promise<RequestOutput[]> {
    const engine = await this.loaded.engine();
    const list = Array.isArray(prompts) ? prompts : [prompts];
    const paramsList = paramsFor(params, list.length);
    const jobs = list.map((prompt, i): PromptJob => () => runPrompt(engine, {
      prompt: rawPrompt(prompt), output: plainOutput(paramsList[i]!), ...batchLimits(paramsList[i]!),
    }));
    return runBatch(jobs, options);
  }

  /** Applies the chat template to each conversation, then generates as `generate` does, through the one chat orchestrator. */
  async chat(input: ChatInput, params?: ParamsInput, options: ChatOptions = {}): Promise<RequestOutput[]> {
    const engine = await this.loaded.engine();
    const layers = await this.loaded.layers();
    const conversations = await toConversations(input);
    const paramsList = paramsFor(params, conversations.length);
    const jobs = conversations.map((messages, i): PromptJob => () => runPrompt(engine, {
      prompt: {
        kind: "conversation", messages, layers,
        ...(options.continue_final_message ? { continueFinalMessage: true } : { addGenerationPrompt: options.add_generation_prompt ?? true }),
        ...(options.chat_template_kwargs ? { templateVariables: options.chat_template_kwargs } : {}),
      },
      // The template sees the tools; the reply is not read for calls.
      output: { ...(options.tools ? { tools: options.tools } : {}), ...plainOutput(paramsList[i]!) },
      ...batchLimits(paramsList[i]!),
    }));
    return runBatch(jobs, options);
  }

  /**
   * Speaks each text with a text-to-speech model, one after the other (the engine speaks one at a time),
   * through the speech orchestrator every surface uses; results come back in input order.
   */
  async speech(texts: string | string[], params: SpeechParams = {}): Promise<SpeechOutput[]> {
    const engine = await this.loaded.engine();
    const speed = params.speed ?? 1;
    if (!(speed >= MIN_SPEECH_SPEED && speed <= MAX_SPEECH_SPEED)) throw new RangeError(`speed must be a number from ${MIN_SPEECH_SPEED} to ${MAX_SPEECH_SPEED}`);
    const sampling = new SamplingParams({
      ...(params.seed !== undefined ? { seed: params.seed } : {}), ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
      ...(params.top_p !== undefined ? { top_p: params.top_p } : {}), ...(params.top_k !== undefined ? { top_k: params.top_k } : {}),
    });
    const outputs: SpeechOutput[] = [];
    for (const text of Array.isArray(texts) ? texts : [texts]) {
      const speech = await runSpeech({ engine: async () => engine }, {
        text, options: sampling.optionValues(),
        ...(params.max_frames !== undefined ? { maxFrames: params.max_frames } : {}),
        ...(params.language !== undefined ? { language: params.language } : {}),
        ...(params.speaker !== undefined ? { speaker: params.speaker } : {}),
      });
      const stretch = await timeStretch(speech.sampleRate, speed);
      const parts: Float32Array[] = [];
      try {
        for await (const chunk of speech.chunks) parts.push(stretch.push(chunk));
        parts.push(stretch.end());
      } finally {
        stretch.close();
      }
      const result = await speech.done;
      const samples = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
      let at = 0;
      for (const part of parts) { samples.set(part, at); at += part.length; }
      outputs.push({
        request_id: String(nextRequestId++), text, samples, sample_rate: speech.sampleRate, frames: result.frames,
        finish_reason: speechFinishReason(result.stoppedBy),
      });
    }
    return outputs;
  }

  /** Frees the model and its Worker; later calls fail. */
  dispose(): Promise<void> {
    return this.loaded.dispose();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

function paramsFor(params: ParamsInput | undefined, count: number): SamplingParams[] {
  const asParams = (p: SamplingParams | SamplingParamsInit | undefined) => (p instanceof SamplingParams ? p : new SamplingParams(p));
  if (!Array.isArray(params)) {
    const one = asParams(params);
    return Array.from({ length: count }, () => one);
  }
  if (params.length !== count) throw new RangeError(`The lengths of prompts (${count}) and sampling_params (${params.length}) must be the same.`);
  return params.map(asParams);
}

/** One prompt string, a list of them, one conversation, or a list of conversations. */
async function toConversations(input: ChatInput): Promise<TemplateMessage[][]> {
  if (typeof input === "string") return [[{ role: "user", content: input }]];
  if (input.length === 0) return [];
  if (input.every((item) => typeof item === "string")) return (input as string[]).map((text) => [{ role: "user", content: text }]);
  if (input.every((item) => Array.isArray(item))) return Promise.all((input as ChatInputMessage[][]).map(toTemplateMessages));
  if (input.every((item) => typeof item === "object" && item !== null && !Array.isArray(item))) return [await toTemplateMessages(input as ChatInputMessage[])];
  throw new TypeError("Cannot read chat input: give a prompt string, a list of prompt strings, or a list of conversations (lists of messages)");
}

/** One prompt of a batch: renders it and starts its choices when a slot of the batch is free. */
type PromptJob = () => Promise<{ prompt: RenderedPrompt; streams: ChoiceStream[] }>;

/** A prompt of `generate`: text gets BOS as the vocabulary asks (as vLLM's tokenizer adds it); token ids are read as they are. */
function rawPrompt(prompt: PromptInput): PromptSpec {
  if (typeof prompt === "object" && "prompt_token_ids" in prompt) return { kind: "tokens", tokens: prompt.prompt_token_ids };
  return { kind: "text", text: typeof prompt === "string" ? prompt : prompt.prompt, addSpecial: true };
}

/** vLLM's offline API returns the model's text as it is: no reasoning split, no calls read; a grammar constrains it. */
function plainOutput(params: SamplingParams): ChatOutputRequest {
  return { reasoning: false, readCallsAs: "none", ...(params.grammar ? { constraint: { type: "grammar" as const, grammar: params.grammar } } : {}) };
}

/** The parameters, the reply's limit (none: until the context is full) and the number of outputs. */
function batchLimits(params: SamplingParams): Pick<ChatSpec, "options" | "limit" | "n"> {
  return { options: params.optionValues(), limit: { maxTokens: params.max_tokens ?? "unlimited", overflow: "allow" }, n: params.n };
}

/** Runs one prompt's spec on the loaded engine; its outputs are read as engine events. */
async function runPrompt(engine: EngineHandle, spec: ChatSpec): Promise<{ prompt: RenderedPrompt; streams: ChoiceStream[] }> {
  const { prompt, choices } = await runChat({ engine: async () => engine }, spec);
  return { prompt, streams: choices.map((choice) => choice.stream) };
}

async function runBatch(jobs: PromptJob[], options: BatchOptions): Promise<RequestOutput[]> {
  const bar = (options.progress ?? true) && jobs.length > 1 ? new ProgressBar(jobs.length) : undefined;
  const results: RequestOutput[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      const { prompt, streams } = await jobs[index]!();
      results[index] = await collectPrompt(prompt, streams);
      bar?.tick(prompt.tokens.length, results[index].outputs.reduce((sum, o) => sum + o.token_ids.length, 0));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(MAX_IN_FLIGHT, jobs.length) }, worker));
  } finally {
    bar?.finish();
  }
  return results;
}

async function collectPrompt(prompt: RenderedPrompt, streams: ChoiceStream[]): Promise<RequestOutput> {
  const request_id = String(nextRequestId++);
  const outputs = await Promise.all(streams.map(async (stream, index): Promise<CompletionOutput> => {
    let text = "";
    const token_ids: number[] = [];
    for await (const event of stream.events()) {
      if (event.type === "token") {
        text += event.text;
        token_ids.push(event.token);
      } else if (event.type === "done") {
        return {
          index, text, token_ids, cumulative_logprob: null, logprobs: null,
          finish_reason: event.finishReason === "cancelled" ? "abort" : event.finishReason,
          stop_reason: event.stop ?? event.stopToken ?? null,
          ...(event.usage.draftTokens !== undefined
            ? { spec_decode: { draft_tokens: event.usage.draftTokens, accepted_tokens: event.usage.acceptedDraftTokens ?? 0 } }
            : {}),
        };
      } else {
        throw new Error(`Cannot generate for prompt ${request_id}: ${event.message}`);
      }
    }
    throw new Error(`Cannot generate for prompt ${request_id}: generation ended without a result`);
  }));
  return { request_id, prompt: prompt.text, prompt_token_ids: prompt.tokens, outputs, finished: true };
}
