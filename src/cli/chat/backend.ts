// What `run` needs from whatever answers it: a local engine it hosts itself, or a running server.
import type { ChatMessage } from "../../chat/types.ts";
import type { ModelDetails } from "../model-details.ts";
import type { SpeechFormat } from "../../audio/speech/speech-encoder.ts";

export interface ChatTurn {
  messages: ChatMessage[];
  /** base64 images attached to the last user message */
  images: string[];
  /** base64 audio files (WAV, MP3, FLAC) attached to the last user message */
  audio?: string[];
  /** options set in the session (`/set parameter`, flags); the model's own parameters lie beneath */
  options: Record<string, unknown>;
  format?: "json";
  /** how long the model stays loaded afterwards (a Go duration such as "5m", or seconds) */
  keepAlive?: string;
}

/** Ollama's timing fields, for --verbose. */
export interface ChatStats {
  totalMs: number;
  loadMs: number;
  promptTokens: number;
  promptMs: number;
  evalTokens: number;
  evalMs: number;
}

/** `run --output`: the text a text-to-speech model speaks, and the file it becomes. */
export interface SpeechTurn {
  text: string;
  format: SpeechFormat;
  /** 0.25 to 4 (1: as the model speaks) */
  speed: number;
  /** a speaker file's name (the model's folder, LLAMUX_VOICES); unset: the model's own voice */
  voice?: string;
  /** options as for a chat turn; num_predict bounds the audio frames */
  options: Record<string, unknown>;
  keepAlive?: string;
}

export type ChatStreamEvent = { type: "content"; text: string } | { type: "done"; stats: ChatStats };

export interface ChatBackend {
  /** the model's name as the user gave it */
  readonly model: string;
  /** loads the model (so the first answer does not wait for it) */
  load(keepAlive?: string): Promise<void>;
  chat(turn: ChatTurn, signal: AbortSignal): AsyncGenerator<ChatStreamEvent>;
  /** the speech's file bytes, in order (a text-to-speech model) */
  speak(turn: SpeechTurn, signal: AbortSignal): AsyncGenerator<Uint8Array>;
  /** what `/show` prints */
  details(): Promise<ModelDetails>;
  close(): Promise<void>;
}
