// The one path of a chat request, shared by every profile and the SDK: render the model's chat
// template, tokenize, run n choices, and read each choice's text into ChatEvents.
import { tokenizerAddsBos, CHATML_TEMPLATE } from "../chat/template.ts";
import type { ToolCallSyntax } from "../chat/tool-calls/formats.ts";
import type { ChatMessage, ToolDefinition } from "../chat/types.ts";
import { runOffThread } from "../chat/off-thread/pool.ts";
import { EngineError, type EngineImage, type GenerateRequest, type TokenLogprobs } from "../engine/types.ts";
import { ChoiceStream, doneFields, startChoices, type DoneEvent } from "./choices.ts";
import { PlainTextOutput, type OutputParser, type ParsedToolCall } from "../chat/output-parser.ts";
import type { ChatEvent, ChatFinishReason, PromptProgress } from "./chat-events.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import { placeImages, withoutMediaMarkers } from "./prompt-images.ts";
import { modelLabel } from "./model-label.ts";

/** What the chat template gets. */
export interface ChatPrompt {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  /** End the prompt with the assistant turn's opening. Default: true. */
  addGenerationPrompt?: boolean;
  /** Extra template variables (chat_template_kwargs), e.g. enable_thinking. */
  templateVariables?: Record<string, unknown>;
  /** Leave the final (assistant) message open so generation continues it (vLLM continue_final_message). */
  continueFinalMessage?: boolean;
  /** How the model writes calls, for templates that do not render `tool_calls`. Default: the template's, else hermes. */
  toolCallSyntax?: ToolCallSyntax;
}

export interface RenderedPrompt {
  /** The prompt text; with images, one media marker stands for each. */
  text: string;
  /**
   * The tokens. With images these are the text's tokens only (the engine counts each image's tokens
   * when it places the image), so their number is a lower bound of the prompt's length.
   */
  tokens: number[];
  /** The images in marker order, when the conversation has any. */
  images?: EngineImage[];
}

/**
 * Renders the model's template (ChatML when it has none) off the serving thread, and tokenizes the result.
 * BOS is added only when the template did not write it, unless `addSpecial` says otherwise. Control-token
 * text inside the messages or tools is tokenized as plain text: only the template's own text yields
 * control tokens.
 */
export async function renderChatPrompt(engine: EngineHandle, prompt: ChatPrompt, options: { addSpecial?: boolean } = {}): Promise<RenderedPrompt> {
  const info = engine.info;
  const placed = await placeImages(prompt.messages, info);
  const { text, segments } = await runOffThread("chatText", {
    template: info.chatTemplate ?? CHATML_TEMPLATE,
    controlTokenTexts: info.controlTokenTexts ?? [],
    bosText: info.bosText,
    eosText: info.eosText,
    // Say whose template failed: a pulled model's template is untrusted input like a request.
    ...(info.chatTemplate !== undefined ? { owner: `the chat template of ${modelLabel(info)}` } : {}),
    messages: placed.messages,
    ...(prompt.tools?.length ? { tools: prompt.tools } : {}),
    ...(prompt.addGenerationPrompt !== undefined ? { addGenerationPrompt: prompt.addGenerationPrompt } : {}),
    ...(prompt.continueFinalMessage ? { continueFinalMessage: true } : {}),
    ...(prompt.templateVariables ? { templateVariables: prompt.templateVariables } : {}),
    ...(prompt.toolCallSyntax ? { toolCallSyntax: prompt.toolCallSyntax } : {}),
  });
  const addSpecial = options.addSpecial ?? tokenizerAddsBos(text, info.bosText);
  const tokens: number[] = [];
  for (const [index, segment] of segments.entries()) {
    // appended one by one: spreading a long prompt's tokens as arguments overflows the stack
    for (const token of await engine.tokenize(withoutMediaMarkers(segment.text, info), { addSpecial: addSpecial && index === 0, parseSpecial: !segment.plain })) tokens.push(token);
  }
  return { text, tokens, ...(placed.images.length ? { images: placed.images } : {}) };
}

export interface ChatRunOptions {
  /** Choices sampled in parallel from the same prompt. Default: 1. */
  n?: number;
  signal?: AbortSignal;
  /** Told when each choice's engine sequence ends (metrics, logs). */
  onDone?: (event: DoneEvent) => void;
  /** A fresh parser per choice; default: all text is answer text. */
  parser?: () => OutputParser;
}

/** One choice read to its end. */
export interface ChatResult {
  content: string;
  reasoning: string;
  toolCalls: ParsedToolCall[];
  finishReason: ChatFinishReason;
  stop?: string;
  stopToken?: number;
  usage: DoneEvent["usage"];
  logprobs: TokenLogprobs[];
}

export class ChatChoice {
  /** `stream` is the choice's engine events as they come, for callers that want tokens rather than meaning (vLLM's LLM.chat). */
  constructor(readonly stream: ChoiceStream, private readonly parser: OutputParser) {}

  /** The choice's events; ends with one `done` or `error`. */
  events(): AsyncGenerator<ChatEvent> {
    return this.read(false) as AsyncGenerator<ChatEvent>;
  }

  /** The same, with prompt progress reports before the first event (for every prompt when the spec asked for progress). */
  eventsWithProgress(): AsyncGenerator<ChatEvent | PromptProgress> {
    return this.read(true);
  }

  private async *read(withProgress: boolean): AsyncGenerator<ChatEvent | PromptProgress> {
    let pendingLogprobs: TokenLogprobs[] = [];
    let calledTools = false;
    const outputs = function* (this: void, items: ReturnType<OutputParser["push"]>): Generator<ChatEvent> {
      for (const item of items) {
        if (item.type === "tool_call") calledTools = true;
        if (item.type !== "content") {
          yield item;
          continue;
        }
        yield { type: "content", text: item.text, logprobs: pendingLogprobs };
        pendingLogprobs = [];
      }
    };
    for await (const event of this.stream.eventsWithProgress()) {
      if (event.type === "progress") {
        if (withProgress) yield { type: "prompt_progress", processed: event.processed, total: event.total, cached: event.cached, ms: event.ms };
      } else if (event.type === "token") {
        if (event.logprobs) pendingLogprobs.push(event.logprobs);
        yield* outputs(this.parser.push(event.text));
      } else if (event.type === "done") {
        yield* outputs(this.parser.finish());
        const fields = doneFields(event);
        // A choice that called tools and then stopped reports it as OpenAI clients expect.
        const finishReason: ChatFinishReason = calledTools && fields.finishReason === "stop" ? "tool_calls" : fields.finishReason;
        yield { type: "done", ...fields, finishReason, ...(pendingLogprobs.length ? { logprobs: pendingLogprobs } : {}) };
        return;
      } else {
        yield { type: "error", code: event.code, message: event.message };
        return;
      }
    }
  }

  /** The whole choice; an engine error is thrown as an EngineError. */
  collect(): Promise<ChatResult> {
    return collectChatEvents(this.events());
  }
}

/** Chat events read to their end as one result (other events are passed over); an error is thrown as an EngineError. */
export async function collectChatEvents(events: AsyncIterable<ChatEvent | { type: string }>): Promise<ChatResult> {
  let content = "";
  let reasoning = "";
  const toolCalls: ParsedToolCall[] = [];
  const logprobs: TokenLogprobs[] = [];
  for await (const item of events) {
    const event = item as ChatEvent;
    switch (event.type) {
      case "content":
        content += event.text;
        logprobs.push(...event.logprobs);
        break;
      case "reasoning":
        reasoning += event.text;
        break;
      case "tool_call":
        toolCalls.push(event.call);
        break;
      case "done": {
        const { type: _, logprobs: rest, ...fields } = event;
        if (rest) logprobs.push(...rest);
        return { content, reasoning, toolCalls, logprobs, ...fields };
      }
      case "error":
        throw new EngineError(event.code, event.message);
    }
  }
  throw new EngineError("engine_failure", "Generation ended without a result");
}

/** The prompt fields of an engine request for a rendered prompt: its tokens, or with images its text and images (the engine places each at its marker). */
export function promptInput(engine: EngineHandle, prompt: RenderedPrompt): Pick<GenerateRequest, "prompt" | "images" | "addSpecial" | "parseSpecial"> {
  if (!prompt.images?.length) return { prompt: prompt.tokens };
  return { prompt: prompt.text, images: prompt.images, addSpecial: tokenizerAddsBos(prompt.text, engine.info.bosText), parseSpecial: true };
}

/**
 * The rendered prompt's length as a reply's usage reports it: with media, the engine's count, each image's or
 * audio clip's embedding tokens included (`addSpecial` as the prompt was rendered with, where it was set).
 */
export async function promptTokenCount(engine: EngineHandle, prompt: RenderedPrompt, addSpecial?: boolean): Promise<number> {
  if (!prompt.images?.length) return prompt.tokens.length;
  return engine.countPromptTokens({ ...promptInput(engine, prompt), ...(addSpecial !== undefined ? { addSpecial } : {}) });
}

/** Starts n choices of a rendered prompt; a refused request throws an EngineError before anything streams. */
export async function startChat(
  engine: EngineHandle, prompt: RenderedPrompt, request: Omit<GenerateRequest, "id" | "prompt">, options: ChatRunOptions = {},
): Promise<ChatChoice[]> {
  const streams = await startChoices(engine, [{ ...request, ...promptInput(engine, prompt) }], options.n ?? 1, options.signal, options.onDone);
  const parser = options.parser ?? (() => new PlainTextOutput());
  return streams.map((stream) => new ChatChoice(stream, parser()));
}
