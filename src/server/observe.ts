// Reports each finished choice of a route to the server's generation observer (metrics, logs).
import type { ServerDeps } from "./deps.ts";
import type { DoneEvent } from "../generation/choices.ts";

export function observeChoices(deps: ServerDeps, model: string, arrived: number): (done: DoneEvent) => void {
  return (done) => deps.observer?.finished({
    model, usage: done.usage, finishReason: done.finishReason === "cancelled" ? "abort" : done.finishReason, e2eSeconds: (performance.now() - arrived) / 1000,
  });
}
