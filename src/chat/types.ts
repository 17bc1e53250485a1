// Chat messages as the engine's callers pass them, after each profile's translation.

export interface ToolCall {
  id?: string;
  type: "function";
  function: { name: string; arguments: string | Record<string, unknown> };
}

/**
 * One image of a chat message: the bytes of an image file (JPEG, PNG, GIF, BMP or WebP). Build them
 * with src/vision/image-source.ts (imageFromUrl, imageFromBase64, imageFromFile).
 */
export type ChatImage = Uint8Array;

/**
 * One audio clip of a chat message: the bytes of a WAV, MP3 or FLAC file. Build them with
 * src/audio/audio-source.ts (audioFromBase64, audioFromFile).
 */
export type ChatAudio = Uint8Array;

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  /** Text; text content parts are joined by the profile. */
  content: string | null;
  /** Images the message shows, placed before its text (as Ollama places them). Needs a model with vision. */
  images?: ChatImage[];
  /** Audio clips the message carries, placed after its images and before its text. Needs a model whose projector has audio. */
  audio?: ChatAudio[];
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
}

export interface ToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}
