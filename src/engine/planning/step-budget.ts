// How many prompt tokens a step takes, and whose. A decode step puts one token of every generating
// sequence into the batch; prompt tokens fill the rest. A long prefill that filled the whole batch would
// hold every generating stream for as long as it takes (about 0.8 s for 512 tokens of a 350M model on two
// CPU cores, where a step of eight streams alone takes 60 ms): that pause is what a person watching a
// stream sees.
//
// The rule: while sequences are generating, a step may take only as many prompt tokens as keep it within
// STEP_BOUND_FACTOR times what a step of every sequence generating costs (the context's sequences, or more
// rows with drafts), and never fewer than MIN_PROMPT_CHUNK, so that prompts always progress. The bound is
// the full batch's rather than the rows decoding now: one stream beside seven waiting prompts would
// otherwise take a small share of a step at a time (a decode step of one row costs a third of eight's on a
// CPU), keeping every waiting prompt from its first token for many steps, while the pause it spares that
// stream is within what it sees anyway once the others generate. Costs are measured, not assumed: a line fitted to the
// engine's own decode steps (ms against rows) and a decayed average of what a prompt token adds to a step.
// Until both are known (the first steps of a new engine), and whenever nothing is generating, a step takes
// what the batch holds. On a GPU a prompt token costs a few hundredths of a decode step, so the bound
// rarely cuts anything; on a CPU it cuts a long prefill into chunks that leave streams going.
//
// Then the prompts share the step's tokens (allocatePrefill): those that can finish within one step
// first, in admission order, then longer ones, fewest tokens left first, a prompt passed over in a step
// counting a step's worth of tokens less from then on (so it is overtaken for a bounded time only).
import { StepCost } from "./speculation-cost.ts";

/** Generating sequences wait at most this many times their own step's cost for a step with prompt tokens. */
export const STEP_BOUND_FACTOR = 4;
/** The fewest prompt tokens a step takes while prompts wait (per-token cost on a CPU is flat from about here). */
export const MIN_PROMPT_CHUNK = 64;
/** On the CPU, a step that finishes a prompt ends there once it holds this many tokens. */
export const CPU_PROMPT_FLUSH_TOKENS = 64;
/** Weight left to a prompt-token cost sample after each newer one: about the last 20 prompt steps count. */
const PROMPT_COST_DECAY = 0.95;
/** Steps with fewer prompt tokens say little about their cost per token. */
const MIN_PROMPT_SAMPLE = 16;

/** What steps cost, measured: decode rows on a fitted line, prompt tokens by a decayed average. */
export class StepCosts {
  private readonly decode = new StepCost();
  private promptMsSum = 0;
  private promptTokenSum = 0;

  /** A step of `decodeRows` generating rows (drafts included) and `promptTokens` prompt tokens took `ms`. */
  record(decodeRows: number, promptTokens: number, ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    if (promptTokens === 0) {
      this.decode.record(decodeRows, ms);
      return;
    }
    if (promptTokens < MIN_PROMPT_SAMPLE) return;
    const decodeMs = decodeRows > 0 ? this.decodeMs(decodeRows) : 0;
    if (decodeMs === undefined) return;
    this.promptMsSum = this.promptMsSum * PROMPT_COST_DECAY + Math.max(0, ms - decodeMs);
    this.promptTokenSum = this.promptTokenSum * PROMPT_COST_DECAY + promptTokens;
  }

  /**
   * The predicted ms of a step of `rows` generating rows alone, once known. Steady streams decode the
   * same number of rows step after step, which fits no line; their mean cost is then the estimate (the
   * moment a prompt arrives beside them is exactly when it is needed).
   */
  decodeMs(rows: number): number | undefined {
    return this.decode.estimate(rows);
  }

  /** What one prompt token adds to a step, once known. */
  promptTokenMs(): number | undefined {
    return this.promptTokenSum > 0 ? this.promptMsSum / this.promptTokenSum : undefined;
  }
}

/**
 * Prompt tokens this step may take beside `decodeRows` generating rows: the batch's free room when
 * nothing generates or costs are not known yet, else what keeps the step within STEP_BOUND_FACTOR times
 * a step of `fullRows` generating rows (every sequence; at least `decodeRows`), at least MIN_PROMPT_CHUNK,
 * at most the free room.
 */
export function promptTokenBudget(
  costs: { decodeMs(rows: number): number | undefined; promptTokenMs(): number | undefined }, decodeRows: number, batchFree: number, fullRows = decodeRows,
): number {
  if (decodeRows === 0) return batchFree;
  const decodeMs = costs.decodeMs(Math.max(decodeRows, fullRows));
  const tokenMs = costs.promptTokenMs();
  if (decodeMs === undefined || tokenMs === undefined) return batchFree;
  const fitting = tokenMs > 0 ? Math.floor(((STEP_BOUND_FACTOR - 1) * decodeMs) / tokenMs) : batchFree;
  return Math.max(0, Math.min(batchFree, Math.max(MIN_PROMPT_CHUNK, fitting)));
}

/** An admitted prompt as the step sees it. */
export interface PrefillView {
  /** Tokens left of its prompt. */
  left: number;
  /** Tokens it may take this step before a boundary (an image, a state to save): at most `left`. */
  run: number;
  /** Steps in which other prompts took tokens while it took none. */
  passedOver: number;
}

/**
 * The order in which prompts take a step's tokens (indices into `prompts`, which are in admission order):
 * those with at most `capacity` tokens left, in admission order, then the others by tokens left minus
 * `capacity` per step passed over.
 */
export function prefillOrder(prompts: readonly PrefillView[], capacity: number): number[] {
  const indices = prompts.map((_, i) => i);
  const short = indices.filter((i) => prompts[i]!.left <= capacity);
  const priority = (i: number) => prompts[i]!.left - prompts[i]!.passedOver * capacity;
  const long = indices.filter((i) => prompts[i]!.left > capacity).sort((a, b) => priority(a) - priority(b));
  return [...short, ...long];
}

export interface PrefillLimits {
  /** Prompt tokens the step may take (the smaller of the token budget and the free memory cells). */
  tokens: number;
  /** Free rows of the batch. */
  batchFree: number;
  /** Rows already in the batch (generating sequences' tokens and drafts). */
  batchCount: number;
  /** Once a prompt ends in this step, the step takes further prompt tokens only up to this many rows. */
  flushTokens: number;
}

/** Tokens each prompt puts into this step (indexed as `prompts`), taking them in `order`. */
export function allocatePrefill(prompts: readonly PrefillView[], order: readonly number[], limits: PrefillLimits): number[] {
  const taken = prompts.map(() => 0);
  let { tokens, batchFree, batchCount } = limits;
  let promptEnded = false;
  for (const i of order) {
    if (batchFree === 0) break;
    const prompt = prompts[i]!;
    let count = Math.min(prompt.run, batchFree, tokens);
    if (promptEnded) count = Math.min(count, Math.max(0, limits.flushTokens - batchCount));
    if (count <= 0) continue;
    taken[i] = count;
    tokens -= count;
    batchFree -= count;
    batchCount += count;
    if (count === prompt.left) {
      if (batchCount >= limits.flushTokens) break;
      promptEnded = true;
    }
  }
  return taken;
}

// A burst of prompts that arrive together goes through as llama-server takes it: in full batches, and the
// sequences whose prompt ends first wait for the rest before decoding, their first token sent with the
// burst's last ones (the scheduler holds it back). Otherwise the first to finish starts
// streaming and every later prompt's chunk is a pause in its stream: on a CPU, 8 prompts of 128 tokens
// beside it made pauses of 0.4-0.9 s, two dozen of them (issue 41's inter-token p99). Bounded so that it
// costs a stream at most one step, once: only while what is left of the prompts fits in one batch (two
// while nothing generates yet), only sequences that have their first token alone, and only for prompts
// admitted with them or after them: a warm turn never waits for a cold prompt that was running before it.

/** How much earlier than a sequence a prompt may have been admitted and still count as arriving with it. */
export const BURST_WINDOW_MS = 50;

/** A generating sequence as the burst rule sees it. */
export interface FirstTokenView {
  /** Tokens it has generated. */
  generated: number;
  /** Whether it already sat out a step for other prompts. */
  held: boolean;
  /** When it was admitted (ms, performance.now()). */
  startedAt: number;
}

/** The prompts in progress as the burst rule sees them. */
export interface PromptsInProgress {
  /** Tokens left to process, all prompts together. */
  tokensLeft: number;
  /** When the earliest of them was admitted. */
  earliestStart: number;
}

/**
 * Whether this step's generating sequences (`generating`) sit out the step so that the prompts in progress
 * finish in it: when every one of them has only its first token, has not waited before and was admitted
 * with those prompts or before them, and the prompts' rest fits in one batch of `capacity`.
 */
export function holdsFirstTokens(generating: readonly FirstTokenView[], prompts: PromptsInProgress, capacity: number): boolean {
  return generating.length > 0 && prompts.tokensLeft > 0 && prompts.tokensLeft <= capacity
    && generating.every((s) => s.generated === 1 && !s.held && prompts.earliestStart >= s.startedAt - BURST_WINDOW_MS);
}

/**
 * The tokens after which a step that finishes a prompt stops taking more (`flushTokens`, the CPU's early
 * end that lets a short prompt's first token out before a long prompt's chunk), or none: while nothing
 * generates and the prompts in progress finish within two batches, the step takes a full batch.
 */
export function promptFlushFor(decodeRows: number, promptTokensLeft: number, capacity: number, flushTokens: number): number {
  return decodeRows === 0 && promptTokensLeft <= 2 * capacity ? Infinity : flushTokens;
}
