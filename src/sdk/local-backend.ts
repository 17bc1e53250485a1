// Generation for a Conversation in this process: the model's chat template with the registered
// functions as tools, the shared chat path (renderChatPrompt, startChat), and the chat events turned
// into MessageResponses.
import type { SamplerSettings } from "../../ffi/sampler.ts";
import { promptOpensReasoning, ReasoningOutput } from "../chat/reasoning.ts";
import { TOOL_CALL_FORMATS } from "../chat/tool-calls/formats.ts";
import { ToolCallOutput } from "../chat/tool-calls/tool-call-output.ts";
import type { ChatMessage as TemplateMessage } from "../chat/types.ts";
import { ChainedOutput, PlainTextOutput, type ChatFinishReason, type OutputParser } from "../generation/chat-events.ts";
import { startChat } from "../generation/chat.ts";
import type { GenerateRequest } from "../engine/types.ts";
import { UnsupportedContentError } from "./chat-input.ts";
import { AudioContent, ChatMessage, ImageContent, TextContent } from "./chat-message.ts";
import type { ConversationBackend, GenerationRequest } from "./conversation.ts";
import { checkToolChoice } from "./tool-choice.ts";
import { planChatOutput, toolCallSyntaxOfTemplate } from "../generation/chat-output.ts";
import type { LeapFunctionCall } from "./function-call-validation.ts";
import type { GenerationOptions } from "./generation-options.ts";
import type { LocalModel } from "./local-model.ts";
import { Chunk, Complete, FunctionCalls, GenerationError, ReasoningChunk, type MessageResponse } from "./message-response.ts";

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

function samplingOf(options: GenerationOptions): Partial<SamplerSettings> {
  const s: Partial<SamplerSettings> = { seed: options.seed !== undefined ? options.seed >>> 0 : Math.floor(Math.random() * 0xffffffff) };
  if (options.temperature !== undefined) s.temperature = options.temperature;
  if (options.topP !== undefined) s.topP = options.topP;
  if (options.topK !== undefined) s.topK = options.topK;
  if (options.minP !== undefined) s.minP = options.minP;
  if (options.repetitionPenalty !== undefined) s.repeatPenalty = options.repetitionPenalty;
  return s;
}

export class LocalBackend implements ConversationBackend {
  constructor(private readonly model: LocalModel) {}

  async *generate({ messages, functions, options, signal }: GenerationRequest): AsyncGenerator<MessageResponse> {
    const engine = await this.model.engine();
    const choice = options.toolChoice;
    checkToolChoice(choice, functions);
    // The grammar of a forced call follows the model's own syntax (from its template), whichever parser
    // reads the reply; a template that shows none gets the chosen parser's syntax.
    const template = engine.info.chatTemplate;
    const syntax = toolCallSyntaxOfTemplate(template) ?? options.functionCallParser?.format.syntax ?? TOOL_CALL_FORMATS.lfm2.syntax;
    const plan = planChatOutput({ tools: functions.map((fn) => fn.toToolDefinition()), toolChoice: choice, parallelToolCalls: options.parallelToolCalls }, template, syntax);
    const prompt = await this.model.renderPrompt(engine, { messages: toTemplateMessages(messages, this.model.model, { vision: engine.info.vision?.images ?? false, audio: engine.info.vision?.audio ?? false }), ...(plan.tools.length ? { tools: plan.tools } : {}) });
    const parser = choice === "none" ? null : options.functionCallParser;
    const request: Omit<GenerateRequest, "id" | "prompt"> = { sampling: { ...samplingOf(options), ...(plan.grammar ? { grammar: plan.grammar } : {}) } };
    if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
    // Call markers are special tokens in most vocabularies: the parser (or the caller, without one) needs their text.
    if (plan.tools.length > 0) request.renderSpecialTokens = true;
    const forced = plan.grammar !== undefined;
    const reader = (): OutputParser => {
      const calls = parser ? new ToolCallOutput(parser.format, { single: typeof choice === "object" || !options.parallelToolCalls }) : new PlainTextOutput();
      // A forced reply is calls from its first token: reasoning cannot open before them.
      return forced ? calls : new ChainedOutput(new ReasoningOutput({ startsInside: promptOpensReasoning(prompt.text) }), calls);
    };
    const [chatChoice] = await startChat(engine, prompt, request, { parser: reader, signal });

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
