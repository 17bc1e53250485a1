// What one chat (or completion) request asks of the orchestrator, whatever API it came through: the
// prompt, how the reply is read and constrained, the parameters, and the reply's limit. Routes, the SDKs
// and the CLI build one of these and hand it to runChat.
import type { ThinkSetting } from "../chat/go-template/ollama-prompt.ts";
import type { ChatMessage } from "../chat/types.ts";
import type { EngineOptions, RequestSchedule } from "../engine/types.ts";
import type { OptionValues } from "../options/values.ts";
import type { ChatOutputRequest, ToolCallParserName } from "./chat-output.ts";
import type { DoneEvent } from "./choices.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import type { ModelPromptSource } from "./model-prompt.ts";

/** A conversation, rendered by the model's template (its Modelfile TEMPLATE, else the GGUF's chat template). */
export interface ConversationPrompt {
  kind: "conversation";
  messages: ChatMessage[];
  /** The model's Modelfile layers: TEMPLATE, SYSTEM, seed messages. */
  layers?: ModelPromptSource;
  /** Replaces the model's SYSTEM and TEMPLATE (/api/generate's `system` and `template`). */
  system?: string;
  template?: string;
  /** Fill-in-the-middle: the text after the insertion point (a TEMPLATE that reads .Suffix). */
  suffix?: string;
  /** Ollama's `think`, for Go templates; Jinja templates get enable_thinking from it. */
  think?: ThinkSetting;
  /** chat_template_kwargs: extra variables for a Jinja template. */
  templateVariables?: Record<string, unknown>;
  /** Default: true. */
  addGenerationPrompt?: boolean;
  /** Leave the final (assistant) message open (vLLM's continue_final_message). */
  continueFinalMessage?: boolean;
  /** Add BOS as the vocabulary asks (true) or never (false), whatever the template wrote (/tokenize's add_special_tokens). Default: only where the template wrote none. */
  addSpecial?: boolean;
  /**
   * A chat longer than the context: drop its oldest messages (Ollama's /api/chat), cut its tokens as a
   * raw prompt is cut (Ollama's /api/generate), or refuse it. Default: refuse.
   */
  overflow?: "refuse" | "drop-oldest" | "cut";
}

/** Text the model reads as it is (a raw prompt), with images or audio placed before it. */
export interface TextPrompt {
  kind: "text";
  text: string;
  media?: { images?: Uint8Array[]; audio?: Uint8Array[] };
  /** Text longer than the context: cut it, keeping its first num_keep tokens and its end (Ollama's default), or refuse it. */
  overflow?: "refuse" | "cut";
  /** Add BOS as the vocabulary asks even where the text starts with it (as vLLM tokenizes a prompt). Default: only where it does not. */
  addSpecial?: boolean;
}

/** Token ids the model reads as they are (a token prompt of /v1/completions, the SDK's prompt_token_ids). */
export interface TokensPrompt {
  kind: "tokens";
  /** Each must lie in the model's vocabulary. */
  tokens: number[];
  /** Token ids are never cut: a prompt longer than the context is refused. */
  overflow?: "refuse";
}

export type PromptSpec = (ConversationPrompt | TextPrompt | TokensPrompt) & {
  /** Token ids that come before the prompt (Ollama's deprecated `context` of an earlier reply). */
  prefix?: number[];
};

/**
 * How long the reply may be. `maxTokens` is the API's own limit field (unset: the options' maxTokens,
 * then until the context is full; "unlimited": until the context is full whatever the options say).
 * When the prompt plus the limit exceed the context: "refuse" (vLLM), "clamp" to the room left (the
 * agents' APIs), or "allow" (Ollama: the engine stops where the context ends).
 */
export interface ReplyLimit {
  maxTokens?: number | "unlimited";
  overflow: "refuse" | "clamp" | "allow";
  /** The limit where neither maxTokens nor the options set one (the legacy text completions' 16). Default: none. */
  defaultMaxTokens?: number;
}

export interface ChatSpec {
  prompt: PromptSpec;
  /** Tools, tool choice, structured output and reasoning. Default: plain text with reasoning split off. */
  output?: ChatOutputRequest;
  /** The parameters, layered already: the API's defaults, the model's own, the request's. */
  options: OptionValues;
  limit: ReplyLimit;
  /** Choices sampled in parallel from one prompt (seeds seed, seed+1, …). Default: 1. */
  n?: number;
  /** Report each token's log-probability with this many alternatives. */
  logprobs?: number;
  /** Keep special tokens in the text the reader sees. Default: when tool calls are read (their markers are special tokens). */
  keepSpecialTokens?: boolean;
  /** At most this many reasoning tokens; then the reasoning is closed and the answer follows. */
  reasoningBudget?: number;
  /**
   * Report the prompt's progress after every step that processes it (ChatChoice.eventsWithProgress),
   * even a prompt that fits one step. Without it, only prompts that span several steps are reported.
   */
  promptProgress?: boolean;
  /** Session hint, owner and priority, handed to the engine's scheduler as they are. */
  schedule?: RequestSchedule;
}

/** The most context a request to a model can get from its host, and what sets that bound. */
export interface ContextCeiling {
  tokens: number;
  /**
   * "trained": the context the model was trained for; "memory": what the memory free for its KV cache holds
   * (less than it was trained for); "setting": the server's context setting, where it does not grow.
   */
  boundBy: "trained" | "memory" | "setting";
  /** The context the model was trained for, when its file says. */
  trainedContext?: number;
}

/** The model a request runs on, as its host (server, SDK, CLI) loads it. */
export interface ModelHandle {
  /** The engine, loaded (or reloaded) with at least these load options. */
  engine(load: Partial<EngineOptions>): Promise<EngineHandle>;
  /**
   * Makes the model's context hold `neededTokens` (reloading it with more, within its trained context and
   * memory); false where it cannot. A host without it never grows a model.
   */
  grow?(neededTokens: number): Promise<boolean>;
  /** The most context grow can reach, for the words of a request that still does not fit. */
  ceiling?(): ContextCeiling;
}

export interface RunOptions {
  /** The server's --tool-call-parser: the call syntax replies are read in, ahead of the template's. */
  toolCallParser?: ToolCallParserName;
  /** What the host knows of the caller (the owner, weight and cap of its key): over the spec's own schedule. */
  schedule?: RequestSchedule;
  signal?: AbortSignal;
  /** Told when each choice's engine sequence ends (metrics, logs). */
  onDone?: (event: DoneEvent) => void;
}

/**
 * A request that cannot fit the model's context: its prompt alone ("prompt"), or its prompt with the
 * reply's limit ("reply"). Each API words it its own way.
 */
export class ContextLimitError extends RangeError {
  constructor(
    readonly kind: "prompt" | "reply",
    readonly promptTokens: number,
    readonly contextLength: number,
    readonly maxTokens?: number,
    /** Where the host grows contexts: the most it can reach (contextLength is then its tokens). */
    readonly ceiling?: ContextCeiling,
  ) {
    super(kind === "prompt"
      ? `Cannot fit a prompt of ${promptTokens} tokens in a context of ${contextLength}`
      : `Cannot fit a reply of up to ${maxTokens} tokens after a prompt of ${promptTokens} in a context of ${contextLength}`);
    this.name = "ContextLimitError";
  }
}
