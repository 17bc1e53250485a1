// Runs the n choices of one completion request as parallel sequences of the model's engine, and
// streams or collects them; the chat and text routes differ only in how a chunk looks.
import type { EngineProcess } from "../../engine/engine-process.ts";
import {
  EngineError, type EngineEvent, type FinishReason, type GenerateRequest, type RequestUsage, type TokenLogprobs,
} from "../../engine/types.ts";
import { toApiError } from "../api-error.ts";

export type DoneEvent = Extract<EngineEvent, { type: "done" }>;

export interface ChoiceResult {
  text: string;
  finishReason: FinishReason;
  stop?: string;
  stopToken?: number;
  usage: RequestUsage;
  logprobs: TokenLogprobs[];
}

/** How a route shapes its streamed chunks. */
export interface ChunkFormat {
  /** A chunk with new text of choice `index`, and the logprobs of the tokens that produced it. */
  text(index: number, text: string, logprobs: TokenLogprobs[]): unknown;
  /** The last chunk of choice `index`. */
  finish(index: number, done: DoneEvent): unknown;
}

/** OpenAI's finish_reason for an engine finish. */
export function finishReasonOf(reason: FinishReason): string {
  return reason === "cancelled" ? "abort" : reason;
}

/** vLLM's stop_reason: the matched stop string or stop token id, else null. */
export function stopReasonOf(done: { stop?: string; stopToken?: number }): string | number | null {
  return done.stop ?? done.stopToken ?? null;
}

export class ChoiceStream {
  constructor(private readonly generator: AsyncGenerator<EngineEvent>, private readonly first: EngineEvent, private readonly onDone?: (event: DoneEvent) => void) {}

  async *events(): AsyncGenerator<EngineEvent> {
    for await (const event of this.all()) {
      if (event.type === "done") this.onDone?.(event);
      yield event;
    }
  }

  private async *all(): AsyncGenerator<EngineEvent> {
    yield this.first;
    if (this.first.type !== "token") return;
    yield* this.generator;
  }

  async collect(): Promise<ChoiceResult> {
    let text = "";
    const logprobs: TokenLogprobs[] = [];
    for await (const event of this.events()) {
      if (event.type === "token") {
        text += event.text;
        if (event.logprobs) logprobs.push(event.logprobs);
      } else if (event.type === "done") {
        return {
          text, finishReason: event.finishReason, usage: event.usage, logprobs,
          ...(event.stop !== undefined ? { stop: event.stop } : {}), ...(event.stopToken !== undefined ? { stopToken: event.stopToken } : {}),
        };
      } else {
        throw toApiError(new EngineError(event.code, event.message));
      }
    }
    throw toApiError(new EngineError("engine_failure", "Generation ended without a result"));
  }

  /** Sends this choice's chunks; resolves with its usage, or undefined after sending an error chunk. */
  async stream(index: number, format: ChunkFormat, send: (data: unknown) => Promise<void>): Promise<RequestUsage | undefined> {
    let pendingLogprobs: TokenLogprobs[] = [];
    for await (const event of this.events()) {
      if (event.type === "token") {
        if (event.logprobs) pendingLogprobs.push(event.logprobs);
        // Text held back (a possible stop string, a partial character) waits for a later chunk.
        if (!event.text) continue;
        await send(format.text(index, event.text, pendingLogprobs));
        pendingLogprobs = [];
      } else if (event.type === "done") {
        await send(format.finish(index, event));
        return event.usage;
      } else {
        await send({ error: { message: event.message, type: "InternalServerError", param: null, code: 500 } });
        return undefined;
      }
    }
    return undefined;
  }
}

/**
 * Starts each request n times (seeds seed, seed+1, …) and waits for every sequence's first event, so
 * that a refused request (busy queue, prompt too long) becomes an HTTP error before any response is sent.
 */
export async function startChoices(
  engine: EngineProcess, requests: Array<Omit<GenerateRequest, "id">>, n: number, signal: AbortSignal, onDone?: (event: DoneEvent) => void,
): Promise<ChoiceStream[]> {
  const generators = requests.flatMap((request) => {
    const seed = request.sampling?.seed ?? 0;
    return Array.from({ length: n }, (_, i) => engine.generate({ ...request, sampling: { ...request.sampling, seed: (seed + i) >>> 0 } }, signal));
  });
  const firsts = await Promise.all(generators.map((g) => g.next()));
  const failed = firsts.find((f) => !f.done && f.value.type === "error");
  if (failed || firsts.some((f) => f.done)) {
    await Promise.all(generators.map((g) => g.return(undefined)));
    const event = failed?.value as Extract<EngineEvent, { type: "error" }> | undefined;
    throw toApiError(new EngineError(event?.code ?? "engine_failure", event?.message ?? "Generation ended before it started"));
  }
  return generators.map((g, i) => new ChoiceStream(g, firsts[i]!.value as EngineEvent, onDone));
}

/** Streams all choices concurrently; resolves with their usages, or undefined if any ended in error. */
export async function streamChoices(choices: ChoiceStream[], format: ChunkFormat, send: (data: unknown) => Promise<void>): Promise<RequestUsage[] | undefined> {
  const usages = await Promise.all(choices.map((choice, index) => choice.stream(index, format, send)));
  return usages.includes(undefined) ? undefined : (usages as RequestUsage[]);
}
