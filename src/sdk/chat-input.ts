// Chat messages as SDK callers write them (OpenAI's shape: string content or a list of parts) turned
// into the template's messages. Text parts are joined, image_url parts (data: URI or http(s) URL) read
// into the message's images; other parts are refused by name.
import type { ChatMessage as TemplateMessage, ToolCall } from "../chat/types.ts";
import { imageFromUrl, ImageInputError } from "../vision/image-source.ts";

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

async function contentOf(content: ChatInputMessage["content"], index: number): Promise<{ text: string | null; images: Uint8Array[] }> {
  if (content == null || typeof content === "string") return { text: content ?? null, images: [] };
  const texts: string[] = [];
  const images: Uint8Array[] = [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "image_url") {
      const value = (part as { image_url?: unknown }).image_url;
      const url = typeof value === "string" ? value : (value as { url?: unknown } | undefined)?.url;
      if (typeof url !== "string") throw new TypeError(`Cannot read message ${index}: an image_url part needs a url`);
      try {
        images.push(await imageFromUrl(url));
      } catch (error) {
        if (error instanceof ImageInputError) throw new UnsupportedContentError(`Cannot read message ${index}: ${error.message}`);
        throw error;
      }
    } else throw new UnsupportedContentError(`Cannot read message ${index}: content part "${part.type}" is not supported by the in-process chat (text and images only)`);
  }
  return { text: texts.join("\n"), images };
}

export async function toTemplateMessages(messages: ChatInputMessage[]): Promise<TemplateMessage[]> {
  return Promise.all(messages.map(async (m, index) => {
    if (typeof m?.role !== "string" || !m.role) throw new TypeError(`Cannot read message ${index}: it has no role`);
    const { text, images } = await contentOf(m.content, index);
    const out: TemplateMessage = { role: m.role, content: text };
    if (images.length) out.images = images;
    if (m.name) out.name = m.name;
    if (m.tool_calls) out.tool_calls = m.tool_calls;
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    if (m.reasoning_content) out.reasoning_content = m.reasoning_content;
    return out;
  }));
}
