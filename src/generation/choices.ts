// Runs the n choices of one request as parallel sequences of a model's engine, and hands out each
// choice's engine events; the routes (and the chat layer) decide what a chunk looks like.
import { EngineError, isFinalEvent, type EngineEvent, type PromptProgressEvent, type FinishReason, type GenerateRequest, type RequestUsage, type TokenLogprobs } from "../engine/types.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";

export type DoneEvent = Extract<EngineEvent, { type: "done" }>;

export interface ChoiceResult {
  text: string;
  finishReason: FinishReason;
  stop?: string;
  stopToken?: number;
  usage: RequestUsage;
  logprobs: TokenLogprobs[];
}

export class ChoiceStream {
  constructor(private readonly generator: AsyncGenerator<EngineEvent>, private readonly first: EngineEvent, private readonly onDone?: (event: DoneEvent) => void) {}

  /** The choice's tokens and its end (a done or error event). */
  async *events(): AsyncGenerator<Exclude<EngineEvent, PromptProgressEvent>> {
    for await (const event of this.eventsWithProgress()) if (event.type !== "progress") yield event;
  }

  /** The same, with the engine's prompt progress reports before the first token. */
  async *eventsWithProgress(): AsyncGenerator<EngineEvent> {
    for await (const event of this.all()) {
      if (event.type === "done") this.onDone?.(event);
      yield event;
    }
  }

  /** Ends the choice unread: its sequence is cancelled (a request refused after this choice started). */
  async cancel(): Promise<void> {
    await this.generator.return(undefined);
  }

  private async *all(): AsyncGenerator<EngineEvent> {
    yield this.first;
    if (isFinalEvent(this.first)) return;
    yield* this.generator;
  }

  /** The whole choice; an engine error is thrown as an EngineError. */
  async collect(): Promise<ChoiceResult> {
    let text = "";
    const logprobs: TokenLogprobs[] = [];
    for await (const event of this.events()) {
      if (event.type === "token") {
        text += event.text;
        if (event.logprobs) logprobs.push(event.logprobs);
      } else if (event.type === "done") {
        return { text, logprobs, ...doneFields(event) };
      } else {
        throw new EngineError(event.code, event.message);
      }
    }
    throw new EngineError("engine_failure", "Generation ended without a result");
  }
}

/** A done event's result fields, without its optional keys when they are unset. */
export function doneFields(event: DoneEvent): Pick<ChoiceResult, "finishReason" | "usage" | "stop" | "stopToken"> {
  return {
    finishReason: event.finishReason, usage: event.usage,
    ...(event.stop !== undefined ? { stop: event.stop } : {}), ...(event.stopToken !== undefined ? { stopToken: event.stopToken } : {}),
  };
}

/**
 * Starts each request n times (seeds seed, seed+1, …) and waits for every sequence's first event, so
 * that a refused request (busy queue, prompt too long) becomes an error before any response is sent.
 * The first event is the first token, or a progress report when the prompt spans several steps: a long
 * prompt's response then starts while it is processed.
 */
export async function startChoices(
  engine: EngineHandle, requests: Array<Omit<GenerateRequest, "id">>, n: number, signal?: AbortSignal, onDone?: (event: DoneEvent) => void,
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
    throw new EngineError(event?.code ?? "engine_failure", event?.message ?? "Generation ended before it started");
  }
  return generators.map((g, i) => new ChoiceStream(g, firsts[i]!.value as EngineEvent, onDone));
}
