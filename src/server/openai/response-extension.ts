// Extra top-level fields a profile adds to a finished (non-streamed) completion body, such as LM
// Studio's `stats`, `model_info` and `runtime` on /api/v0: the /v1 handlers run unchanged and the
// profile's routes pass one of these.
import type { RequestUsage } from "../../engine/types.ts";
import type { ChatFinishReason } from "../../generation/chat-events.ts";
import type { EngineHandle } from "../../engine/engine-handle.ts";

export interface FinishedChoice {
  finishReason: ChatFinishReason;
  stop?: string;
  stopToken?: number;
  usage: RequestUsage;
}

export interface ResponseExtensionContext {
  engine: EngineHandle;
  choices: FinishedChoice[];
  /** The request's token limit, when it set one. */
  maxTokens: number | undefined;
}

export type ResponseExtension = (context: ResponseExtensionContext) => Record<string, unknown>;
