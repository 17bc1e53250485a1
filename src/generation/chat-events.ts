// What a chat choice streams once its text is read for meaning: answer text, reasoning, tool calls.
// Every profile renders these (OpenAI deltas, Ollama's message fields, the SDK's MessageResponses).
import type { ChatOutput } from "../chat/output-parser.ts";
import type { EngineErrorCode, RequestUsage, TokenLogprobs } from "../engine/types.ts";

export type ChatFinishReason = "stop" | "length" | "cancelled" | "tool_calls";

export type ChatEvent =
  | Exclude<ChatOutput, { type: "content" }>
  /** Answer text, with the logprobs of the tokens that produced it (when asked for). */
  | { type: "content"; text: string; logprobs: TokenLogprobs[] }
  /** `logprobs`: those of the tokens no content event carried (tool calls, trailing markup), when asked for. */
  | { type: "done"; finishReason: ChatFinishReason; stop?: string; stopToken?: number; usage: RequestUsage; logprobs?: TokenLogprobs[] }
  | { type: "error"; code: EngineErrorCode; message: string };

/** How far the prompt is, before the first token (ChatChoice.eventsWithProgress). */
export interface PromptProgress {
  type: "prompt_progress";
  /** Prompt positions in memory so far, of `total`; `cached` of them were reused, not processed. */
  processed: number;
  total: number;
  cached: number;
  /** Since the request left the queue. */
  ms: number;
}

/** The share of the prompt's tokens to process that is done (a cached prefix is not processed): 0 to 1. */
export function processedFraction(progress: PromptProgress): number {
  const toProcess = progress.total - progress.cached;
  return toProcess > 0 ? (progress.processed - progress.cached) / toProcess : 1;
}
