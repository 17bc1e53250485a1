// The SDK's chat message (the spec's ChatMessage): a role, a list of content parts (text, image,
// audio), and on an assistant message the function calls it made.
import { base64ToBytes, bytesToBase64 } from "./base64.ts";
import type { LeapFunctionCall } from "./function-call-validation.ts";

export type ChatRole = "system" | "user" | "assistant" | "tool";

export abstract class ChatMessageContent {
  abstract readonly type: "text" | "image" | "audio";

  /** `new ChatMessageContent.Text("…")`. */
  static Text: typeof TextContent;

  static text(text: string): TextContent {
    return new TextContent(text);
  }

  /** An image: encoded bytes (JPEG, PNG, WebP …), a base64 string, or a data: URL. */
  static image(data: Uint8Array | ArrayBuffer | string, mimeType = "image/jpeg"): ImageContent {
    return new ImageContent(toBytes(data), mimeType);
  }

  /** Audio: encoded bytes (WAV …), a base64 string, or a data: URL. */
  static audio(data: Uint8Array | ArrayBuffer | string, mimeType = "audio/wav"): AudioContent {
    return new AudioContent(toBytes(data), mimeType);
  }
}

export class TextContent extends ChatMessageContent {
  readonly type = "text";
  constructor(readonly text: string) {
    super();
  }
}

export class ImageContent extends ChatMessageContent {
  readonly type = "image";
  constructor(readonly data: Uint8Array, readonly mimeType: string) {
    super();
  }

  /** The image as a data: URL (how OpenAI-compatible servers take it). */
  toDataUrl(): string {
    return `data:${this.mimeType};base64,${bytesToBase64(this.data)}`;
  }
}

export class AudioContent extends ChatMessageContent {
  readonly type = "audio";
  constructor(readonly data: Uint8Array, readonly mimeType: string) {
    super();
  }
}

ChatMessageContent.Text = TextContent;

function toBytes(data: Uint8Array | ArrayBuffer | string): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  const base64 = data.startsWith("data:") ? data.slice(data.indexOf(",") + 1) : data;
  return base64ToBytes(base64);
}

export type ContentInput = string | ChatMessageContent | ChatMessageContent[];

export interface ChatMessageInit {
  role: ChatRole | (string & {});
  content: ContentInput | null;
  functionCalls?: LeapFunctionCall[];
  reasoningContent?: string;
  /** For a tool message: the id of the call it answers (filled in from the calls before it when unset). */
  toolCallId?: string;
}

export class ChatMessage {
  static readonly Role = { SYSTEM: "system", USER: "user", ASSISTANT: "assistant", TOOL: "tool" } as const;

  readonly role: ChatRole;
  readonly content: ChatMessageContent[];
  readonly functionCalls: LeapFunctionCall[] | undefined;
  readonly reasoningContent: string | undefined;
  readonly toolCallId: string | undefined;

  constructor(init: ChatMessageInit) {
    if (!Object.values(ChatMessage.Role).includes(init?.role as ChatRole)) {
      throw new TypeError(`Cannot create chat message: role must be one of system, user, assistant, tool, got ${JSON.stringify(init?.role)}`);
    }
    this.role = init.role as ChatRole;
    const content = init.content ?? [];
    this.content = typeof content === "string" ? [new TextContent(content)] : Array.isArray(content) ? [...content] : [content];
    for (const part of this.content) {
      if (!(part instanceof ChatMessageContent)) throw new TypeError("Cannot create chat message: content parts must be ChatMessageContent.Text, .image(…) or .audio(…)");
    }
    this.functionCalls = init.functionCalls;
    this.reasoningContent = init.reasoningContent;
    this.toolCallId = init.toolCallId;
  }

  /** A message with one text part, as Swift's `ChatMessage(role:textContent:)`. */
  static text(role: ChatRole, textContent: string): ChatMessage {
    return new ChatMessage({ role, content: textContent });
  }

  /** The text parts joined. */
  get text(): string {
    return this.content.filter((part): part is TextContent => part instanceof TextContent).map((part) => part.text).join("");
  }

  /** A ChatMessage as it is, or one made from a plain `{ role, content }` (content a string or OpenAI-style parts). */
  static from(message: ChatMessage | PlainChatMessage): ChatMessage {
    if (message instanceof ChatMessage) return message;
    if (typeof message !== "object" || message === null) throw new TypeError("Cannot read message: give a ChatMessage or { role, content }");
    const content = Array.isArray(message.content) ? message.content.map(plainPart) : message.content ?? null;
    return new ChatMessage({ ...message, content } as ChatMessageInit);
  }
}

/** A message as a plain object: content a string, ChatMessageContent parts, or OpenAI-style parts. */
export interface PlainChatMessage {
  role: ChatRole | (string & {});
  content?: string | null | Array<ChatMessageContent | { type: string; [key: string]: unknown }>;
  functionCalls?: LeapFunctionCall[];
  reasoningContent?: string;
  toolCallId?: string;
}

function plainPart(part: ChatMessageContent | { type: string; [key: string]: unknown }): ChatMessageContent {
  if (part instanceof ChatMessageContent) return part;
  if (part.type === "text" && typeof part.text === "string") return new TextContent(part.text);
  if (part.type === "image_url") {
    const url = typeof part.image_url === "string" ? part.image_url : (part.image_url as { url?: string })?.url;
    if (typeof url === "string" && url.startsWith("data:")) return ChatMessageContent.image(url, url.slice(5, url.indexOf(";")));
  }
  if (part.type === "input_audio") {
    const audio = part.input_audio as { data?: unknown; format?: unknown } | undefined;
    if (typeof audio?.data === "string") return ChatMessageContent.audio(audio.data, `audio/${typeof audio.format === "string" ? audio.format : "wav"}`);
  }
  throw new TypeError(`Cannot read content part of type ${JSON.stringify(part.type)}: use ChatMessageContent.Text, .image(…) or .audio(…)`);
}
