// The SDK's chat history (chatHistoryDataSchema) as the chat messages every route renders: text parts
// joined, assistant tool-call requests as `tool_calls`, each tool result as a `tool` message. File parts
// name uploads of the /files namespace, which llamux does not serve, so they are refused by name.
import { z } from "zod";
import type { ChatMessage } from "../../../chat/types.ts";
import { badRequest } from "../../api-error.ts";

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const filePart = z.object({ type: z.literal("file"), name: z.string(), identifier: z.string() }).loose();
const toolCallRequestPart = z.object({
  type: z.literal("toolCallRequest"),
  toolCallRequest: z.object({ id: z.string().optional(), type: z.literal("function"), name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
});
const toolCallResultPart = z.object({ type: z.literal("toolCallResult"), content: z.string(), toolCallId: z.string().optional() });

const messageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("assistant"), content: z.array(z.discriminatedUnion("type", [textPart, filePart, toolCallRequestPart])) }),
  z.object({ role: z.literal("user"), content: z.array(z.discriminatedUnion("type", [textPart, filePart])) }),
  z.object({ role: z.literal("system"), content: z.array(z.discriminatedUnion("type", [textPart, filePart])) }),
  z.object({ role: z.literal("tool"), content: z.array(toolCallResultPart) }),
]);

export const chatHistorySchema = z.object({ messages: z.array(messageSchema).max(10_000) });
export type ChatHistory = z.infer<typeof chatHistorySchema>;

export function toChatMessages(history: ChatHistory): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const [index, message] of history.messages.entries()) {
    if (message.role === "tool") {
      for (const part of message.content) out.push({ role: "tool", content: part.content, ...(part.toolCallId ? { tool_call_id: part.toolCallId } : {}) });
      continue;
    }
    const texts: string[] = [];
    const calls: NonNullable<ChatMessage["tool_calls"]> = [];
    for (const part of message.content) {
      if (part.type === "text") texts.push(part.text);
      else if (part.type === "file") {
        throw badRequest(`Cannot read file "${part.name}" in history.messages[${index}]: llamux does not serve LM Studio's files namespace; send the text instead`, "history");
      } else {
        const request = part.toolCallRequest;
        calls.push({ ...(request.id ? { id: request.id } : {}), type: "function", function: { name: request.name, arguments: request.arguments ?? {} } });
      }
    }
    out.push({ role: message.role, content: texts.join("\n"), ...(calls.length ? { tool_calls: calls } : {}) });
  }
  return out;
}
