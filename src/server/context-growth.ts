import { ApiError } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";
import type { ServedModel } from "./model-service.ts";

// How far a model's context grows for a request that does not fit it: to the next power of two at or
// above the tokens the request needs (so a conversation that keeps growing reloads a few times, not at
// every turn), never past the context the model was trained for. The memory the sequences share grows
// to that size, not to that size × --parallel: one long sequence uses what the idle ones leave.

/** The smallest context at least this size, for a request of `neededTokens`; undefined when it cannot fit the trained context. */
export function grownContextSize(neededTokens: number, trainedContext: number | undefined): number | undefined {
  if (trainedContext === undefined || neededTokens > trainedContext) return undefined;
  let size = 4096;
  while (size < neededTokens) size *= 2;
  return Math.min(size, trainedContext);
}

/** The context sizes a grown model is loaded with: per sequence, and shared by all of its sequences. */
export interface GrownContext {
  contextPerSequence: number;
  sharedContext: number;
}

export function grownContext(size: number, sharedNow: number): GrownContext {
  return { contextPerSequence: size, sharedContext: Math.max(size, sharedNow) };
}

/** The parameters a route names when the prompt, or the prompt and the reply's max_tokens, do not fit the context. */
const CONTEXT_PARAMS = new Set(["input", "input_tokens", "max_tokens"]);
/** At most this many reloads for one request: from 4096, the context doubles up to 1M tokens. */
const MAX_GROWTHS = 8;

/**
 * The route's reply limit for the rendered prompt; where the route refuses it because it does not fit
 * the context (the prompt, or the prompt and max_tokens), the model grows and the request is rendered
 * again on the new engine (`rerender`), until it fits or cannot grow: then the route's 400 stands.
 */
export async function limitGrowingContext(
  deps: ServerDeps, spec: { model: ServedModel; limit(promptTokens: number, context: number): number | undefined },
  current: () => { tokens: number; context: number }, rerender: () => Promise<unknown>,
): Promise<number | undefined> {
  for (let growths = 0; ; growths++) {
    const { tokens, context } = current();
    try {
      return spec.limit(tokens, context);
    } catch (error) {
      const refusedForContext = error instanceof ApiError && error.status === 400 && CONTEXT_PARAMS.has(error.param ?? "");
      if (!refusedForContext || growths >= MAX_GROWTHS || !await deps.models.growContext(spec.model, Math.max(tokens + 1, 2 * context))) throw error;
      await rerender();
    }
  }
}
