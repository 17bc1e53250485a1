// Chat messages as SDK callers write them (OpenAI's shape: string content or a list of parts) turned
// into the template's messages. Text parts are joined; other parts are refused by name.
import type { ChatMessage as TemplateMessage, ToolCall } from "../chat/types.ts";

export type ChatInputPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: string | { url: string } }
  | { type: string; [key: string]: unknown };

export interface ChatInputMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  content?: string | ChatInputPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
}

/** Thrown for content the loaded model cannot take (images without a projector, audio). */
export class UnsupportedContentError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedContentError";
  }
}

function textOf(content: ChatInputMessage["content"], index: number): string | null {
  if (content == null || typeof content === "string") return content ?? null;
  return content.map((part) => {
    if (part.type === "text" && typeof part.text === "string") return part.text;
    throw new UnsupportedContentError(`Cannot read message ${index}: content part "${part.type}" is not supported by the in-process chat (text only)`);
  }).join("\n");
}

export function toTemplateMessages(messages: ChatInputMessage[]): TemplateMessage[] {
  return messages.map((m, index) => {
    if (typeof m?.role !== "string" || !m.role) throw new TypeError(`Cannot read message ${index}: it has no role`);
    const out: TemplateMessage = { role: m.role, content: textOf(m.content, index) };
    if (m.name) out.name = m.name;
    if (m.tool_calls) out.tool_calls = m.tool_calls;
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    if (m.reasoning_content) out.reasoning_content = m.reasoning_content;
    return out;
  });
}
