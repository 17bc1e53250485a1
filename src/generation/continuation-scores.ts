// How likely a model finds each of several continuations of one prompt: every continuation is an engine
// sequence of its own that scores its forced tokens (GenerateRequest.forcedTokens) instead of sampling,
// all submitted at once so that the scheduler decodes them in the same batches. Sequences after the
// first few reuse the prompt the earlier ones left in their memory.
import { EngineError, type EngineEvent } from "../engine/types.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";

export interface ContinuationScore {
  /** Sum of the log-probabilities of the continuation's tokens. */
  logprob: number;
  tokens: number;
}

/** Scores one sequence: the prompt's tokens, then `continuation` forced; rejects on an engine error. */
async function scoreOne(engine: EngineHandle, prompt: number[], continuation: number[], signal?: AbortSignal): Promise<ContinuationScore> {
  let logprob = 0;
  let tokens = 0;
  let done: Extract<EngineEvent, { type: "done" }> | undefined;
  for await (const event of engine.generate({ prompt, forcedTokens: continuation, logprobs: 0 }, signal)) {
    if (event.type === "error") throw new EngineError(event.code, event.message);
    if (event.type === "done") done = event;
    else if (event.type === "token" && event.logprobs) {
      logprob += event.logprobs.logprob;
      tokens++;
    }
  }
  if (!done || done.finishReason === "cancelled") throw new EngineError("engine_failure", "Scoring ended before its tokens were scored");
  if (tokens !== continuation.length) throw new EngineError("context_overflow", `Scored ${tokens} of ${continuation.length} tokens: the context is full`);
  return { logprob, tokens };
}

/**
 * Each (prompt, continuation) pair's score, in order; every pair runs as a sequence at the same time.
 * The first failure (or `signal`) cancels the sequences still running.
 */
export async function scoreContinuations(
  engine: EngineHandle, pairs: Array<{ prompt: number[]; continuation: number[] }>, signal?: AbortSignal,
): Promise<ContinuationScore[]> {
  const cancel = new AbortController();
  const abort = () => cancel.abort();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    return await Promise.all(pairs.map(({ prompt, continuation }) => scoreOne(engine, prompt, continuation, cancel.signal).catch((error: unknown) => {
      cancel.abort();
      throw error;
    })));
  } finally {
    signal?.removeEventListener("abort", abort);
  }
}
