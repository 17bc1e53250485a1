// Ollama's native chat messages and tools in the chat path's shapes, and tool calls back in Ollama's.
import type { ChatMessage, ToolDefinition } from "../../chat/types.ts";
import type { ParsedToolCall } from "../../chat/output-parser.ts";
import type { ChatRequestBody, NativeChatMessage } from "./schemas.ts";

/**
 * Tool-call arguments are objects here (a JSON string in OpenAI's API); templates get them as objects.
 * `readImages` turns a message's base64 images into bytes (and refuses them for a model without vision),
 * `readAudio` its base64 audio (refused for a model without audio).
 */
export function toChatMessages(
  messages: NativeChatMessage[], readImages: (images: string[]) => Uint8Array[], readAudio: (clips: string[]) => Uint8Array[] = () => [],
): ChatMessage[] {
  return messages.map((m) => {
    const message: ChatMessage = { role: m.role, content: m.content ?? "" };
    if (m.images?.length) message.images = readImages(m.images);
    // llamux's extension: base64 audio files beside the images (`llamux run` sends typed audio paths so)
    if (m.audio?.length) message.audio = readAudio(m.audio);
    if (m.thinking) message.reasoning_content = m.thinking;
    if (m.tool_calls?.length) {
      message.tool_calls = m.tool_calls.map((call) => ({
        ...(call.id ? { id: call.id } : {}), type: "function", function: { name: call.function.name, arguments: call.function.arguments },
      }));
    }
    // Templates name the answering tool `name` (Hugging Face's convention) and match ids by tool_call_id.
    if (m.tool_name) message.name = m.tool_name;
    if (m.tool_call_id) message.tool_call_id = m.tool_call_id;
    return message;
  });
}

export function toToolDefinitions(tools: ChatRequestBody["tools"]): ToolDefinition[] {
  return (tools ?? []).map((tool) => ({ type: "function", function: tool.function }));
}

/** A tool call as Ollama sends it: arguments as an object, the call's position as `function.index`. */
export function nativeToolCall(index: number, call: ParsedToolCall) {
  return { id: call.id, function: { index, name: call.name, arguments: call.arguments } };
}
