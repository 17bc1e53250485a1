// The one path of a chat request, shared by every profile and the SDK: render the model's chat
// template, tokenize, run n choices, and read each choice's text into ChatEvents.
import { ChatTemplateError, renderChatTemplate, templateRendersToolCalls, tokenizerAddsBos, CHATML_TEMPLATE } from "../chat/template.ts";
import { TOOL_CALL_FORMATS, type ToolCallSyntax } from "../chat/tool-calls/formats.ts";
import { nativeCallText } from "../chat/tool-calls/native-text.ts";
import { toolCallSyntax } from "./chat-output.ts";
import type { ChatMessage, ToolDefinition } from "../chat/types.ts";
import { SpecialTextShield } from "../chat/special-text.ts";
import { placeSystemMessages } from "../chat/system-messages.ts";
import { EngineError, type EngineImage, type GenerateRequest, type TokenLogprobs } from "../engine/types.ts";
import { ChoiceStream, doneFields, startChoices, type DoneEvent } from "./choices.ts";
import { PlainTextOutput, type OutputParser, type ParsedToolCall } from "../chat/output-parser.ts";
import type { ChatEvent, ChatFinishReason } from "./chat-events.ts";
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

/**
 * For a template that ignores an assistant message's `tool_calls`, the calls go into its content in the
 * model's own syntax, so the model still sees what it called.
 */
function withNativeCallText(messages: ChatMessage[], template: string, syntax: ToolCallSyntax | undefined): ChatMessage[] {
  if (!messages.some((m) => m.tool_calls?.length) || templateRendersToolCalls(template)) return messages;
  const format = TOOL_CALL_FORMATS[syntax ?? toolCallSyntax(template, undefined) ?? "hermes"];
  return messages.map((message) => {
    if (!message.tool_calls?.length) return message;
    const { tool_calls: calls, ...rest } = message;
    const native = nativeCallText(format, calls.map((call) => ({ name: call.function.name, arguments: call.function.arguments })));
    return { ...rest, content: message.content ? `${message.content}${native}` : native };
  });
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
 * Renders the model's template (ChatML when it has none) and tokenizes the result. BOS is added only
 * when the template did not write it, unless `addSpecial` says otherwise. Control-token text inside the
 * messages or tools is tokenized as plain text: only the template's own text yields control tokens.
 */
export async function renderChatPrompt(engine: EngineHandle, prompt: ChatPrompt, options: { addSpecial?: boolean } = {}): Promise<RenderedPrompt> {
  const info = engine.info;
  const placed = await placeImages(prompt.messages, info);
  const images = placed.images;
  const continueFinal = prompt.continueFinalMessage ?? false;
  if (continueFinal && prompt.addGenerationPrompt) throw new ChatTemplateError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.");
  const template = info.chatTemplate ?? CHATML_TEMPLATE;
  const shield = new SpecialTextShield(info.controlTokenTexts ?? []);
  const tools = prompt.tools?.length ? shield.protect(prompt.tools) : undefined;
  const renderOptions = {
    ...(tools ? { tools } : {}),
    addGenerationPrompt: continueFinal ? false : prompt.addGenerationPrompt ?? true,
    bosToken: info.bosText,
    eosToken: info.eosText,
    ...(prompt.templateVariables ? { variables: prompt.templateVariables } : {}),
  };
  const messages = placeSystemMessages(shield.protect(withNativeCallText(placed.messages, template, prompt.toolCallSyntax)),
    (conversation) => renderChatTemplate(template, conversation, renderOptions));
  let rendered: string;
  try {
    rendered = renderChatTemplate(template, messages, renderOptions);
  } catch (error) {
    // Say whose template failed: a pulled model's template is untrusted input like a request.
    if (error instanceof ChatTemplateError && info.chatTemplate !== undefined) {
      throw new ChatTemplateError(`${error.message} (the chat template of ${modelLabel(info)})`, { cause: error });
    }
    throw error;
  }
  if (continueFinal) rendered = cutAfterFinalMessage(rendered, messages);
  const text = shield.used ? shield.restore(rendered) : rendered;
  const addSpecial = options.addSpecial ?? tokenizerAddsBos(text, info.bosText);
  const withImages = images.length ? { images } : {};
  if (!shield.used) return { text, tokens: await engine.tokenize(withoutMediaMarkers(text, info), { addSpecial, parseSpecial: true }), ...withImages };
  const tokens: number[] = [];
  for (const [index, segment] of shield.segments(rendered).entries()) {
    tokens.push(...await engine.tokenize(withoutMediaMarkers(segment.text, info), { addSpecial: addSpecial && index === 0, parseSpecial: !segment.plain }));
  }
  return { text, tokens, ...withImages };
}

/** As Hugging Face's apply_chat_template: the prompt ends right after the final message's text. */
function cutAfterFinalMessage(text: string, messages: ChatMessage[]): string {
  const finalText = (messages.at(-1)?.content ?? "").trim();
  const end = text.lastIndexOf(finalText);
  if (!finalText || end < 0) throw new ChatTemplateError("continue_final_message is set but the final message does not appear in the chat after applying the chat template!");
  return text.slice(0, end + finalText.length);
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
  async *events(): AsyncGenerator<ChatEvent> {
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
    for await (const event of this.stream.events()) {
      if (event.type === "token") {
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
  async collect(): Promise<ChatResult> {
    let content = "";
    let reasoning = "";
    const toolCalls: ParsedToolCall[] = [];
    const logprobs: TokenLogprobs[] = [];
    for await (const event of this.events()) {
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
}

/** The prompt fields of an engine request for a rendered prompt: its tokens, or with images its text and images (the engine places each at its marker). */
export function promptInput(engine: EngineHandle, prompt: RenderedPrompt): Pick<GenerateRequest, "prompt" | "images" | "addSpecial" | "parseSpecial"> {
  if (!prompt.images?.length) return { prompt: prompt.tokens };
  return { prompt: prompt.text, images: prompt.images, addSpecial: tokenizerAddsBos(prompt.text, engine.info.bosText), parseSpecial: true };
}

/** Starts n choices of a rendered prompt; a refused request throws an EngineError before anything streams. */
export async function startChat(
  engine: EngineHandle, prompt: RenderedPrompt, request: Omit<GenerateRequest, "id" | "prompt">, options: ChatRunOptions = {},
): Promise<ChatChoice[]> {
  const streams = await startChoices(engine, [{ ...request, ...promptInput(engine, prompt) }], options.n ?? 1, options.signal, options.onDone);
  const parser = options.parser ?? (() => new PlainTextOutput());
  return streams.map((stream) => new ChatChoice(stream, parser()));
}
