// OpenAI-style choice streaming shared by the chat and text completion routes: each choice's chunks
// are sent as they come, all choices concurrently, and an engine error becomes an error chunk.
import { EngineError, type EngineErrorCode, type FinishReason, type RequestUsage, type TokenLogprobs } from "../../engine/types.ts";
import type { ChatFinishReason } from "../../generation/chat-events.ts";
import type { ChoiceStream, DoneEvent } from "../../generation/choices.ts";
import { toApiError } from "../api-error.ts";
import type { Profile } from "../profiles/profile.ts";

/** OpenAI's finish_reason for an engine finish. */
export function finishReasonOf(reason: FinishReason | ChatFinishReason): string {
  return reason === "cancelled" ? "abort" : reason;
}

/** vLLM's stop_reason: the matched stop string or stop token id, else null. */
export function stopReasonOf(done: { stop?: string; stopToken?: number }): string | number | null {
  return done.stop ?? done.stopToken ?? null;
}

/** The chunk that ends a stream whose generation failed, in the profile's error shape. */
export function errorChunk(profile: Profile, code: EngineErrorCode, message: string): unknown {
  return profile.openAiErrorBody(toApiError(new EngineError(code, message)));
}

/** How the text completion route shapes its streamed chunks. */
export interface ChunkFormat {
  /** A chunk with new text of choice `index`, and the logprobs of the tokens that produced it. */
  text(index: number, text: string, logprobs: TokenLogprobs[]): unknown;
  /** The last chunk of choice `index`. */
  finish(index: number, done: DoneEvent): unknown;
  error(code: EngineErrorCode, message: string): unknown;
}

/** Sends one choice's chunks; resolves with its usage, or undefined after sending an error chunk. */
async function streamChoice(
  choice: ChoiceStream, index: number, format: ChunkFormat, send: (data: unknown) => Promise<void>, keepAlive?: () => Promise<void>,
): Promise<RequestUsage | undefined> {
  let pendingLogprobs: TokenLogprobs[] = [];
  // The choices share one prompt: the first one's progress keeps the stream alive during a long prefill.
  for await (const event of keepAlive && index === 0 ? choice.eventsWithProgress() : choice.events()) {
    if (event.type === "progress") {
      await keepAlive?.();
    } else if (event.type === "token") {
      if (event.logprobs) pendingLogprobs.push(event.logprobs);
      // Text held back (a possible stop string, a partial character) waits for a later chunk.
      if (!event.text) continue;
      await send(format.text(index, event.text, pendingLogprobs));
      pendingLogprobs = [];
    } else if (event.type === "done") {
      await send(format.finish(index, event));
      return event.usage;
    } else {
      await send(format.error(event.code, event.message));
      return undefined;
    }
  }
  return undefined;
}

/**
 * Streams all choices concurrently; resolves with their usages, or undefined if any ended in error.
 * `keepAlive` is written after each step of a prompt that spans several.
 */
export async function streamChoices(
  choices: ChoiceStream[], format: ChunkFormat, send: (data: unknown) => Promise<void>, keepAlive?: () => Promise<void>,
): Promise<RequestUsage[] | undefined> {
  const usages = await Promise.all(choices.map((choice, index) => streamChoice(choice, index, format, send, keepAlive)));
  return usages.includes(undefined) ? undefined : (usages as RequestUsage[]);
}
