// One request through an in-process Engine, collected: the engine tests' common way to submit and wait.
import type { Engine } from "../../src/engine/engine.ts";
import type { EngineEvent, GenerateRequest } from "../../src/engine/types.ts";

export interface Outcome { tokens: number[]; done?: Extract<EngineEvent, { type: "done" }>; error?: Extract<EngineEvent, { type: "error" }> }

let nextId = 0;

/**
 * Submits a request; `onToken` hears each token's count, `onProgress` each report of a prompt spanning
 * several steps. Resolves with what it produced (a refusal at submit rejects).
 */
export function run(engine: Engine, request: Omit<GenerateRequest, "id">, onToken?: (count: number) => void, onProgress?: () => void): Promise<Outcome> {
  const outcome: Outcome = { tokens: [] };
  return new Promise((resolve) => {
    engine.submit({ ...request, id: `run${++nextId}` }, (event) => {
      if (event.type === "token") {
        if (event.token >= 0) outcome.tokens.push(event.token);
        onToken?.(outcome.tokens.length);
      } else if (event.type === "progress") {
        onProgress?.();
      } else {
        if (event.type === "done") outcome.done = event;
        else outcome.error = event;
        resolve(outcome);
      }
    });
  });
}
