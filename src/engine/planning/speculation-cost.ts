// Whether a draft pays for itself in this step. A step of R rows takes about fixed + perRow × R ms (the
// weights are read once per step; each row adds its own work, its logits included). With S sequences
// generating, plain decoding spends T(S) / S per token; d draft tokens add d rows (and the drafter's own
// time) to the step and save one token's share for each one accepted. So a draft token is worth it
// while its chance of being kept, times T(S) / S, exceeds its extra cost. One stream reads the whole
// model for one token, so drafts are cheap beside it; eight streams share that read, a token costs
// little more than its row, and only drafts that are nearly always kept still pay.
//
// The cost line is fitted to the engine's own decode steps (no prompt tokens), newest weighted most,
// so it follows the machine, the model, the thread count and the load. The chance of keeping a token
// is each sequence's own: a decayed count of draft tokens kept against the ones that decided a round.
//
// The line is a model, and a model can be wrong where the engine's work is not a line in rows (a hybrid
// target's micro-batches, a rollback of rejected cells, the sampler at each verified row). So the outcome
// is checked too (`StepYield`): tokens produced per ms by whole steps with drafts against steps without,
// at the same number of generating sequences. Where drafting steps produced less, that many sequences
// stop drafting for a while, a while that doubles as long as the next drafting steps still produce less.

/** Weight left to a sample after each newer one: about the last 50 decode steps count. */
const STEP_DECAY = 0.98;
/** Below this spread of row counts (in rows, weighted standard deviation) the line is not known yet. */
const MIN_ROW_SPREAD = 0.5;
/** Weight of the earlier rounds of a sequence beside its newest. */
const ROUND_DECAY = 0.8;
/** Weight left to a step's yield after each newer step of its kind: about the last 20 count. */
const YIELD_DECAY = 0.95;
/** Steps of each kind (with drafts, without) before their yields are compared, and drafting steps between comparisons. */
const YIELD_MIN_STEPS = 4;
/** Steps without drafting after drafting steps produced less: the first hold, doubled while they still do, up to the last. */
export const YIELD_HOLD_MIN_STEPS = 16;
export const YIELD_HOLD_MAX_STEPS = 256;

/** ms ≈ fixed + perRow × rows, by exponentially weighted least squares over recent decode steps. */
export class StepCost {
  private weight = 0;
  private sumRows = 0;
  private sumMs = 0;
  private sumRowsSquared = 0;
  private sumRowsMs = 0;

  record(rows: number, ms: number): void {
    if (!(rows > 0) || !(ms >= 0) || !Number.isFinite(ms)) return;
    this.weight = this.weight * STEP_DECAY + 1;
    this.sumRows = this.sumRows * STEP_DECAY + rows;
    this.sumMs = this.sumMs * STEP_DECAY + ms;
    this.sumRowsSquared = this.sumRowsSquared * STEP_DECAY + rows * rows;
    this.sumRowsMs = this.sumRowsMs * STEP_DECAY + rows * ms;
  }

  /**
   * What a step of `rows` costs: the fitted line once steps of different sizes were seen, else (every
   * recent step had about as many rows) their mean, which is what a step of that size costs.
   */
  estimate(rows: number): number | undefined {
    const line = this.line();
    if (line) return line.fixed + line.perRow * rows;
    return this.weight > 0 ? this.sumMs / this.weight : undefined;
  }

  /** The fitted line, or undefined until steps of different sizes were seen. Neither part is negative. */
  line(): { fixed: number; perRow: number } | undefined {
    if (this.weight === 0) return undefined;
    const meanRows = this.sumRows / this.weight;
    const variance = this.sumRowsSquared / this.weight - meanRows * meanRows;
    if (variance < MIN_ROW_SPREAD * MIN_ROW_SPREAD) return undefined;
    const meanMs = this.sumMs / this.weight;
    const perRow = Math.max(0, (this.sumRowsMs / this.weight - meanRows * meanMs) / variance);
    return { fixed: Math.max(0, meanMs - perRow * meanRows), perRow };
  }
}

/**
 * A sequence's chance that its next draft token is kept, given the ones before it were: kept tokens over
 * kept tokens plus the rounds that ended on a rejection, decayed by round, starting from 1 in 2.
 */
export class AcceptanceRate {
  private kept = 1;
  private decided = 2;

  settle(drafted: number, accepted: number): void {
    if (drafted === 0) return;
    this.kept = this.kept * ROUND_DECAY + accepted;
    this.decided = this.decided * ROUND_DECAY + accepted + (accepted < drafted ? 1 : 0);
  }

  get rate(): number {
    return this.kept / this.decided;
  }
}

export interface DraftEconomy {
  /** The chance that a draft token is kept when the ones before it were. */
  acceptance: number;
  /** ms of the step that plain decoding spends per token (T(S) / S). */
  tokenMs: number;
  /** ms each draft token adds: its row in the step and its share of the drafter's time. */
  draftTokenMs: number;
  /** Longest draft allowed. */
  max: number;
}

/**
 * The draft length with the largest expected saving (kept tokens × tokenMs minus their cost), 0 when
 * no length saves anything. The k-th draft token is kept with chance acceptance^k, so each further token
 * is worth less and the first length whose next token does not pay is the best.
 */
export function worthwhileDraftLength({ acceptance, tokenMs, draftTokenMs, max }: DraftEconomy): number {
  let length = 0;
  let keptChance = 1;
  while (length < max) {
    keptChance *= acceptance;
    if (keptChance * tokenMs <= draftTokenMs) break;
    length++;
  }
  return length;
}

/** Tokens and ms of recent steps of one kind, decayed by step. */
class DecayedYield {
  steps = 0;
  private tokens = 0;
  private ms = 0;

  record(tokens: number, ms: number): void {
    this.steps = this.steps * YIELD_DECAY + 1;
    this.tokens = this.tokens * YIELD_DECAY + tokens;
    this.ms = this.ms * YIELD_DECAY + ms;
  }

  get perMs(): number {
    return this.ms > 0 ? this.tokens / this.ms : 0;
  }
}

/** What drafting yields at one number of generating sequences, and whether it is on hold there. */
interface YieldAtStreams {
  plain: DecayedYield;
  drafted: DecayedYield;
  /** Drafting steps recorded since the last comparison. */
  draftedSinceCheck: number;
  hold: number;
  /** Step count from which drafting resumes. */
  resumeAt: number;
}

/**
 * Whether drafting pays in fact: tokens produced per ms by whole decode steps (drafting, the batch,
 * verification, rollback) with drafts against steps without, per number of generating sequences.
 */
export class StepYield {
  private readonly byStreams = new Map<number, YieldAtStreams>();
  /** Steps planned so far (the clock of the holds). */
  private step = 0;

  private at(streams: number): YieldAtStreams {
    let entry = this.byStreams.get(streams);
    if (!entry) {
      entry = { plain: new DecayedYield(), drafted: new DecayedYield(), draftedSinceCheck: 0, hold: YIELD_HOLD_MIN_STEPS, resumeAt: 0 };
      this.byStreams.set(streams, entry);
    }
    return entry;
  }

  /** Counts a planned step; true when steps of this many generating sequences do not draft now. */
  holding(streams: number): boolean {
    this.step++;
    return this.step < this.at(streams).resumeAt;
  }

  /**
   * A decode step of `streams` generating sequences (no prompt tokens) produced `tokens` in `ms`. Returns
   * the steps drafting is held for when this step starts a hold, 0 otherwise.
   */
  record(streams: number, drafted: boolean, tokens: number, ms: number): number {
    if (!(streams > 0) || !(ms > 0) || !Number.isFinite(ms)) return 0;
    const entry = this.at(streams);
    if (!drafted) {
      entry.plain.record(tokens, ms);
      return 0;
    }
    entry.drafted.record(tokens, ms);
    entry.draftedSinceCheck++;
    if (entry.draftedSinceCheck < YIELD_MIN_STEPS || entry.plain.steps < YIELD_MIN_STEPS) return 0;
    entry.draftedSinceCheck = 0;
    if (entry.drafted.perMs >= entry.plain.perMs) {
      entry.hold = YIELD_HOLD_MIN_STEPS;
      return 0;
    }
    const held = entry.hold;
    entry.resumeAt = this.step + held;
    entry.hold = Math.min(YIELD_HOLD_MAX_STEPS, held * 2);
    return held;
  }

  /** Tokens per ms of drafting steps over steps without, per number of generating sequences (those measured both ways). */
  ratios(): Record<number, number> {
    const ratios: Record<number, number> = {};
    for (const [streams, entry] of this.byStreams) {
      if (entry.plain.steps > 0 && entry.drafted.steps > 0 && entry.plain.perMs > 0) ratios[streams] = entry.drafted.perMs / entry.plain.perMs;
    }
    return ratios;
  }
}
