// Messages between the server (parent) and an engine child process, over Bun's IPC channel.
import type { EngineErrorCode, EngineEvent, EngineOptions, GenerateRequest, ModelInfo, PromptInput, SpeechRequest, SpeechResult } from "./types.ts";

/** What the engine sends of one speech: PCM as frames are decoded, then how it ended or why it failed. */
export type SpeechEvent =
  | { type: "audio"; samples: Float32Array }
  | { type: "end"; result: SpeechResult }
  | { type: "error"; code: EngineErrorCode; message: string };

export type ParentMessage =
  | { type: "load"; options: EngineOptions }
  | { type: "submit"; request: GenerateRequest }
  | { type: "cancel"; id: string }
  /** Speaks a text (a speech model only); cancelled with "cancel" and the same id. */
  | { type: "speak"; id: string; request: SpeechRequest }
  | { type: "tokenize"; callId: number; text: string; addSpecial: boolean; parseSpecial: boolean }
  | { type: "detokenize"; callId: number; tokens: number[] }
  | { type: "countPrompt"; callId: number; prompt: PromptInput }
  | { type: "embed"; callId: number; text: string; truncate?: boolean }
  | { type: "rank"; callId: number; query: string; documents: string[] }
  | { type: "stats"; callId: number }
  | { type: "shutdown" };

export type ChildMessage =
  | { type: "loaded"; info: ModelInfo }
  /** `code` is set when the load options themselves were wrong (an incompatible draft model): not the engine's fault. */
  | { type: "load_failed"; message: string; code?: EngineErrorCode }
  // Events of one step travel together: one IPC message per step, not per token.
  | { type: "events"; events: EngineEvent[] }
  | { type: "speech"; id: string; event: SpeechEvent }
  | { type: "reply"; callId: number; result?: unknown; error?: string; code?: EngineErrorCode }
  /** The RPC servers answered the probe and llama.cpp's back end is joining them (the parent times this). */
  | { type: "rpc_joining" }
  | { type: "rpc_joined" };
