// Runs the n choices of one completion request as parallel sequences of the model's engine.
import type { EngineProcess } from "../../engine/engine-process.ts";
import { EngineError, type EngineEvent, type FinishReason, type GenerateRequest, type RequestUsage } from "../../engine/types.ts";
import { toApiError } from "../api-error.ts";

export interface ChoiceResult { text: string; finishReason: FinishReason; stop?: string; usage: RequestUsage }

export type DoneEvent = Extract<EngineEvent, { type: "done" }>;

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
    for await (const event of this.events()) {
      if (event.type === "token") text += event.text;
      else if (event.type === "done") return { text, finishReason: event.finishReason, ...(event.stop !== undefined ? { stop: event.stop } : {}), usage: event.usage };
      else throw toApiError(new EngineError(event.code, event.message));
    }
    throw toApiError(new EngineError("engine_failure", "Generation ended without a result"));
  }
}

/**
 * Starts n sequences (seeds seed, seed+1, …) and waits for each one's first event, so that a refused
 * request (busy queue, prompt too long) becomes an HTTP error before any response is sent.
 */
export async function startChoices(
  engine: EngineProcess, request: Omit<GenerateRequest, "id">, n: number, signal: AbortSignal, onDone?: (event: DoneEvent) => void,
): Promise<ChoiceStream[]> {
  const seed = request.sampling?.seed ?? 0;
  const generators = Array.from({ length: n }, (_, i) =>
    engine.generate({ ...request, sampling: { ...request.sampling, seed: (seed + i) >>> 0 } }, signal));
  const firsts = await Promise.all(generators.map((g) => g.next()));
  const failed = firsts.find((f) => !f.done && f.value.type === "error");
  if (failed || firsts.some((f) => f.done)) {
    await Promise.all(generators.map((g) => g.return(undefined)));
    const event = failed?.value as Extract<EngineEvent, { type: "error" }> | undefined;
    throw toApiError(new EngineError(event?.code ?? "engine_failure", event?.message ?? "Generation ended before it started"));
  }
  return generators.map((g, i) => new ChoiceStream(g, firsts[i]!.value as EngineEvent, onDone));
}
