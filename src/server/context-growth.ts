// How far a model's context grows for a request that does not fit it (the orchestrator asks, through
// ModelService.growContext, before it refuses a request or drops part of it): to the next power of two at or
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
