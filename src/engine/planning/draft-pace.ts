// Back-off: how many tokens a sequence drafts next, and when it stops drafting for a while.
//
// Every drafted token costs: a draft-model decode, and a row in the target's verify batch. So the draft
// length follows what the target accepted (all accepted: twice as many next time, up to the maximum;
// otherwise one more than were accepted), and a round that accepts nothing pauses speculation for that
// sequence for a number of generated tokens that doubles at each fruitless round (16, 32, … 512) and
// falls back to 16 once a round accepts at least half of its draft. At near-zero acceptance the
// wasted rounds thin out geometrically, so plain decode's speed is kept within a few percent.
// A pace may start from where earlier requests left off (`PaceStart`): their draft length, their next
// pause, and what is left of their current one.

export const PAUSE_MIN_TOKENS = 16;
export const PAUSE_MAX_TOKENS = 512;

export interface PaceStart {
  length: number;
  /** The pause the next fruitless round starts. */
  nextPause: number;
  /** Tokens of this request before it first drafts. */
  pausedFor: number;
}

export class DraftPace {
  length: number;
  private pauseTokens = PAUSE_MIN_TOKENS;
  /** Generated-token count before which the sequence does not draft. */
  private resumeAt = 0;

  constructor(readonly max: number, start?: PaceStart) {
    this.length = start ? Math.max(1, Math.min(max, start.length)) : max;
    if (start) {
      this.pauseTokens = start.nextPause;
      this.resumeAt = start.pausedFor;
    }
  }

  /** The pause the next fruitless round starts. */
  get nextPause(): number {
    return this.pauseTokens;
  }

  /** Whether to draft now, `generated` tokens into the request. */
  drafting(generated: number): boolean {
    return generated >= this.resumeAt;
  }

  /** Tokens left of the current pause, `generated` tokens into the request (0 when drafting). */
  pausedFor(generated: number): number {
    return Math.max(0, this.resumeAt - generated);
  }

  /** The next round is a probe: one token, drafted whatever the cost model says (set by skip). */
  probeNext = false;

  /**
   * Drafting would not pay now (see speculation-cost.ts): pause as after a fruitless round, keeping the length; the
   * round after the pause probes with one token, so that a sequence whose output starts to repeat its
   * input is found again.
   */
  skip(generated: number): void {
    this.resumeAt = generated + this.pauseTokens;
    this.pauseTokens = Math.min(PAUSE_MAX_TOKENS, this.pauseTokens * 2);
    this.probeNext = true;
  }

  /** Records a verified round: `drafted` tokens proposed, `accepted` of them kept. */
  settle(drafted: number, accepted: number, generated: number): void {
    if (drafted === 0) return;
    this.probeNext = false;
    if (accepted === drafted) this.length = Math.min(this.max, Math.max(this.length, drafted) * 2);
    else this.length = Math.max(1, Math.min(this.max, accepted + 1));
    if (accepted === 0) {
      this.resumeAt = generated + this.pauseTokens;
      this.pauseTokens = Math.min(PAUSE_MAX_TOKENS, this.pauseTokens * 2);
    } else if (accepted * 2 >= drafted) {
      this.pauseTokens = PAUSE_MIN_TOKENS;
    }
  }
}
