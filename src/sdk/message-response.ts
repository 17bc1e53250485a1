// What generateResponse streams (the spec's MessageResponse variants): one class per variant, told
// apart with `instanceof` or by the `type` tag.
import type { ChatMessage } from "./chat-message.ts";
import type { LeapFunctionCall } from "./function-call-validation.ts";

export class Chunk {
  readonly type = "chunk";
  constructor(readonly text: string) {}
}

export class ReasoningChunk {
  readonly type = "reasoningChunk";
  constructor(readonly reasoning: string) {}
}

/** Audio a text-to-speech model produced: mono float PCM in [-1, 1] at `sampleRate`, as its frames are decoded. */
export class AudioSample {
  readonly type = "audioSample";
  constructor(readonly samples: Float32Array, readonly sampleRate: number) {}
}

export class FunctionCalls {
  readonly type = "functionCalls";
  constructor(readonly functionCalls: LeapFunctionCall[]) {}
}

/**
 * A call of a registered MCP server's tool that the conversation ran itself: what the model called and
 * what it read back (the tool's text, or "Error: …" where the call failed). The model then continues.
 */
export class McpToolResult {
  readonly type = "mcpToolResult";
  constructor(readonly server: string, readonly call: LeapFunctionCall, readonly result: string, readonly isError: boolean) {}
}

export interface GenerationStats {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Generated tokens per second of decoding (0 when unknown). */
  tokensPerSecond: number;
}

/** How a generation ended: "tool_calls" when it stopped after calling functions. */
export type CompletionFinishReason = "stop" | "length" | "tool_calls" | "cancelled";

export class Complete {
  readonly type = "complete";
  constructor(readonly fullMessage: ChatMessage, readonly finishReason: CompletionFinishReason, readonly stats: GenerationStats) {}
}

/** A failed generation; the stream ends after it. (Exported as MessageResponse.Error.) */
export class GenerationError {
  readonly type = "error";
  constructor(readonly message: string, readonly cause?: unknown) {}
}

export type MessageResponse = Chunk | ReasoningChunk | AudioSample | FunctionCalls | McpToolResult | Complete | GenerationError;

export const MessageResponse = { Chunk, ReasoningChunk, AudioSample, FunctionCalls, McpToolResult, Complete, Error: GenerationError } as const;
