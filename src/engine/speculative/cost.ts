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

/** Weight left to a sample after each newer one: about the last 50 decode steps count. */
const STEP_DECAY = 0.98;
/** Below this spread of row counts (in rows, weighted standard deviation) the line is not known yet. */
const MIN_ROW_SPREAD = 0.5;
/** Weight of the earlier rounds of a sequence beside its newest. */
const ROUND_DECAY = 0.8;

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
