// Generation for a Conversation in this process: the registered functions as tools and the history as
// a chat spec for the orchestrator (the model's template, grammar-forced calls, the chosen call reader),
// and the chat events turned into MessageResponses.
import { TOOL_CALL_FORMATS } from "../chat/tool-calls/formats.ts";
import type { ChatMessage as TemplateMessage } from "../chat/types.ts";
import type { ChatFinishReason } from "../generation/chat-events.ts";
import { runChat } from "../generation/run-chat.ts";
import { UnsupportedContentError } from "./chat-input.ts";
import { AudioContent, ChatMessage, ImageContent, TextContent } from "./chat-message.ts";
import type { ConversationBackend, GenerationRequest } from "./conversation.ts";
import { checkToolChoice } from "./tool-choice.ts";
import { toolCallSyntaxOfTemplate } from "../chat/tool-calls/template-syntax.ts";
import type { LeapFunctionCall } from "./function-call-validation.ts";
import type { LocalModel } from "./local-model.ts";
import { Chunk, Complete, FunctionCalls, GenerationError, ReasoningChunk, type MessageResponse } from "./message-response.ts";
import { speechReply } from "./speech-reply.ts";

/** What the loaded projector encodes: images, audio, both or neither. */
export interface MediaSupport {
  vision: boolean;
  audio: boolean;
}

/** SDK messages as the chat template takes them; images need a vision projector, audio an audio one, both in user and tool messages. */
export function toTemplateMessages(messages: ChatMessage[], model: string, media: MediaSupport | boolean): TemplateMessage[] {
  const support = typeof media === "boolean" ? { vision: media, audio: false } : media;
  return messages.map((message) => {
    const images: Uint8Array[] = [];
    const audio: Uint8Array[] = [];
    for (const part of message.content) {
      if (part instanceof AudioContent) {
        if (!support.audio) throw new UnsupportedContentError(`Cannot use audio content with model "${model}": it has no audio projector (put an mmproj-*.gguf with an audio encoder next to it or pass projectorPath)`);
        if (message.role !== "user" && message.role !== "tool") throw new UnsupportedContentError(`Cannot use audio content in ${message.role} messages: audio goes in user and tool messages`);
        audio.push(part.data);
      }
      if (part instanceof ImageContent) {
        if (!support.vision) throw new UnsupportedContentError(`Cannot use image content with model "${model}": it has no vision projector (put an mmproj-*.gguf next to it or pass projectorPath)`);
        if (message.role !== "user" && message.role !== "tool") throw new UnsupportedContentError(`Cannot use image content in ${message.role} messages: images go in user and tool messages`);
        images.push(part.data);
      }
    }
    const hasText = message.content.some((part) => part instanceof TextContent);
    const out: TemplateMessage = { role: message.role, content: hasText || !message.functionCalls?.length ? message.text : null };
    if (message.functionCalls?.length) {
      out.tool_calls = message.functionCalls.map((call) => ({ ...(call.id ? { id: call.id } : {}), type: "function", function: { name: call.name, arguments: call.arguments } }));
    }
    if (message.reasoningContent) out.reasoning_content = message.reasoningContent;
    if (message.toolCallId) out.tool_call_id = message.toolCallId;
    if (images.length) out.images = images;
    if (audio.length) out.audio = audio;
    return out;
  });
}

export class LocalBackend implements ConversationBackend {
  constructor(private readonly model: LocalModel) {}

  async *generate({ messages, functions, mcpTools, options, signal }: GenerationRequest): AsyncGenerator<MessageResponse> {
    const engine = await this.model.engine();
    // a text-to-speech model answers in audio
    if (engine.info.speech) {
      yield* speechReply(engine, messages, options, signal);
      return;
    }
    const choice = options.toolChoice;
    checkToolChoice(choice, [...functions, ...mcpTools.map((tool) => tool.function)]);
    const tools = [...functions.map((fn) => fn.toToolDefinition()), ...mcpTools];
    // The grammar of a forced call follows the model's own syntax (from its template), whichever parser
    // reads the reply; a template that shows none gets the chosen parser's syntax.
    const syntax = toolCallSyntaxOfTemplate(engine.info.chatTemplate) ?? options.functionCallParser?.format.syntax ?? TOOL_CALL_FORMATS.lfm2.syntax;
    const parser = choice === "none" ? null : options.functionCallParser;
    const media = { vision: engine.info.vision?.images ?? false, audio: engine.info.vision?.audio ?? false };
    const { choices: [chatChoice] } = await runChat({ engine: async () => engine }, {
      prompt: { kind: "conversation", messages: toTemplateMessages(messages, this.model.model, media), layers: await this.model.layers() },
      output: {
        tools, toolChoice: choice, parallelToolCalls: options.parallelToolCalls,
        readCallsAs: parser ? parser.format.syntax : "none",
      },
      options: options.optionValues(),
      limit: { ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}), overflow: "allow" },
      // Call markers are special tokens in most vocabularies: the parser (or the caller, without one) needs their text.
      keepSpecialTokens: tools.length > 0 && choice !== "none",
    }, { toolCallParser: syntax, signal });

    let content = "";
    let reasoning = "";
    const calls: LeapFunctionCall[] = [];
    for await (const event of chatChoice!.events()) {
      switch (event.type) {
        case "content":
          content += event.text;
          yield new Chunk(event.text);
          break;
        case "reasoning":
          reasoning += event.text;
          yield new ReasoningChunk(event.text);
          break;
        case "tool_call":
          calls.push({ id: event.call.id, name: event.call.name, arguments: event.call.arguments });
          break;
        case "tool_call_delta":
          break;
        case "error":
          yield new GenerationError(event.message, event);
          return;
        case "done": {
          if (calls.length > 0) yield new FunctionCalls(calls);
          const fullMessage = new ChatMessage({
            role: "assistant", content: content ? content : [],
            ...(calls.length ? { functionCalls: calls } : {}), ...(reasoning ? { reasoningContent: reasoning } : {}),
          });
          const usage = event.usage;
          const finishReason: ChatFinishReason = event.finishReason;
          yield new Complete(fullMessage, finishReason, {
            promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, totalTokens: usage.promptTokens + usage.completionTokens,
            tokensPerSecond: usage.decodeMs > 0 ? (usage.completionTokens * 1000) / usage.decodeMs : 0,
          });
          return;
        }
      }
    }
  }
}
