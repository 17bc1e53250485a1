// Generation for a Conversation on any OpenAI-compatible server (llamux, vLLM, LM Studio, Ollama's /v1):
// the history and functions as a streamed chat completion, its deltas as MessageResponses. The server
// reads the calls out of the model's text, so GenerationOptions.functionCallParser has no effect here.
import OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { bytesToBase64 } from "./base64.ts";
import { AudioContent, ChatMessage, ImageContent, TextContent } from "./chat-message.ts";
import type { ConversationBackend, GenerationRequest } from "./conversation.ts";
import { checkToolChoice } from "./tool-choice.ts";
import type { LeapFunctionCall } from "./function-call-validation.ts";
import type { GenerationOptions } from "./generation-options.ts";
import { toWireNames } from "../options/wire-names.ts";
import { Chunk, Complete, FunctionCalls, ReasoningChunk, type CompletionFinishReason, type MessageResponse } from "./message-response.ts";

type ContentPart = Exclude<Extract<ChatCompletionMessageParam, { role: "user" }>["content"], string>[number];

function contentParts(message: ChatMessage): string | ContentPart[] {
  if (message.content.every((part) => part instanceof TextContent)) return message.text;
  return message.content.map((part): ContentPart => {
    if (part instanceof ImageContent) return { type: "image_url", image_url: { url: part.toDataUrl() } };
    if (part instanceof AudioContent) return { type: "input_audio", input_audio: { data: bytesToBase64(part.data), format: part.mimeType.includes("mp3") ? "mp3" : "wav" } };
    return { type: "text", text: (part as TextContent).text };
  });
}

/** The history in OpenAI's shape; a tool message without an id answers the next unanswered call before it. */
export function toOpenAiMessages(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  let unanswered: string[] = [];
  let callNumber = 0;
  return messages.map((message): ChatCompletionMessageParam => {
    switch (message.role) {
      case "system":
        return { role: "system", content: message.text };
      case "user":
        return { role: "user", content: contentParts(message) as never };
      case "assistant": {
        const calls = (message.functionCalls ?? []).map((call) => ({ ...call, id: call.id ?? `call_${callNumber++}` }));
        unanswered = calls.map((call) => call.id);
        return {
          role: "assistant",
          content: message.text || (calls.length ? null : ""),
          ...(calls.length ? { tool_calls: calls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } })) } : {}),
        };
      }
      case "tool":
        // A result naming its call answers that one (the MCP results a conversation ran have ids).
        if (message.toolCallId) {
          unanswered = unanswered.filter((id) => id !== message.toolCallId);
          return { role: "tool", tool_call_id: message.toolCallId, content: message.text };
        }
        return { role: "tool", tool_call_id: unanswered.shift() ?? `call_${callNumber++}`, content: message.text };
    }
  });
}

/** The options under their wire names, vLLM's spelling where it has its own (llamux reads both; other servers ignore what they lack). */
function samplingFields(options: GenerationOptions): Record<string, unknown> {
  return { ...toWireNames(options.optionValues(), ["repetition_penalty"]), ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}) };
}

function finishReasonOf(reason: string | null | undefined): CompletionFinishReason {
  return reason === "tool_calls" || reason === "length" ? reason : reason === "abort" ? "cancelled" : "stop";
}

interface PartialCall { id?: string; name: string; arguments: string }

export class RemoteBackend implements ConversationBackend {
  constructor(private readonly client: OpenAI, private readonly model: string) {}

  async *generate({ messages, functions, mcpTools, options, signal }: GenerationRequest): AsyncGenerator<MessageResponse> {
    const choice = options.toolChoice;
    checkToolChoice(choice, [...functions, ...mcpTools.map((tool) => tool.function)]);
    const tools = [...functions.map((fn) => fn.toToolDefinition()), ...mcpTools];
    const body: ChatCompletionCreateParamsStreaming = {
      model: this.model,
      messages: toOpenAiMessages(messages),
      stream: true,
      stream_options: { include_usage: true },
      ...samplingFields(options),
    };
    if (tools.length > 0) {
      body.tools = tools as ChatCompletionCreateParamsStreaming["tools"];
      if (!options.parallelToolCalls) body.parallel_tool_calls = false;
      if (choice !== "auto") body.tool_choice = typeof choice === "object" ? { type: "function", function: { name: choice.name } } : choice;
    }
    const started = performance.now();
    let firstTokenAt = 0;
    const stream = await this.client.chat.completions.create(body, { signal });
    let content = "";
    let reasoning = "";
    const calls: PartialCall[] = [];
    let finishReason: string | null | undefined;
    let usage: ChatCompletionChunk["usage"] | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const first = chunk.choices[0];
      if (!first) continue;
      const delta = first.delta as ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };
      firstTokenAt ||= performance.now();
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (thought) {
        reasoning += thought;
        yield new ReasoningChunk(thought);
      }
      if (delta.content) {
        content += delta.content;
        yield new Chunk(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        const call = (calls[part.index] ??= { name: "", arguments: "" });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
      if (first.finish_reason) finishReason = first.finish_reason;
    }
    const functionCalls = calls.filter(Boolean).map((call): LeapFunctionCall => {
      let args: unknown;
      try {
        args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
      } catch (error) {
        throw new Error(`Cannot read the server's call of "${call.name}": its arguments are not JSON (${call.arguments.slice(0, 60)})`, { cause: error });
      }
      return { ...(call.id ? { id: call.id } : {}), name: call.name, arguments: args as Record<string, unknown> };
    });
    if (functionCalls.length > 0) yield new FunctionCalls(functionCalls);
    const fullMessage = new ChatMessage({
      role: "assistant", content: content ? content : [],
      ...(functionCalls.length ? { functionCalls } : {}), ...(reasoning ? { reasoningContent: reasoning } : {}),
    });
    const promptTokens = usage?.prompt_tokens ?? 0;
    const completionTokens = usage?.completion_tokens ?? 0;
    const decodeSeconds = firstTokenAt ? (performance.now() - Math.max(firstTokenAt, started)) / 1000 : 0;
    yield new Complete(fullMessage, finishReasonOf(finishReason), {
      promptTokens, completionTokens, totalTokens: promptTokens + completionTokens,
      tokensPerSecond: decodeSeconds > 0 ? completionTokens / decodeSeconds : 0,
    });
  }
}
