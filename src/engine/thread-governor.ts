// How many threads the engine decodes with when the user did not say (--threads): the machine's
// physical cores while it has them to itself, fewer while other work holds some of them.
//
// ggml's CPU threads meet at a spinning barrier after every operation of the graph, so one thread that
// loses its core to another process holds all the others until the scheduler gives it a time slice
// again. On a 2-core machine with other work on it, a 350M-parameter model decoded 1-2 tokens/s with 2
// threads and 12-15 tokens/s with 1 (ggml's polling level, 0 to 100, changed nothing: the barrier
// spins whatever it is). The governor measures: now and then it runs a few steps with another thread
// count, and keeps the count whose steps cost least per token (steps of one size only: a prompt chunk
// costs far less per token than a decode step). A trial that is clearly worse is cut after one step,
// and each losing count is tried less and less often, so an idle machine loses well under 1% to the
// trials; when the current count's steps suddenly cost twice as much or half as much (other work came
// or went), every count is tried again at once, so the count follows the machine within seconds.

/** Time between trials of a thread count, doubled each time that count loses (up to the maximum). */
const FIRST_TRIAL_INTERVAL_MS = 2_000;
const MAX_TRIAL_INTERVAL_MS = 60_000;
/**
 * Steps measured before a trial (the current count's cost) and during one: 4, or fewer (at least 2)
 * once they took half a second, so that a machine where each step stalls is measured quickly.
 */
const WINDOW_STEPS = 4;
const MIN_WINDOW_STEPS = 2;
const WINDOW_MS = 500;
/** A trial count wins when its steps cost this much less than the current count's. */
const WIN_MARGIN = 0.85;
/** A trial step costing this many times the current count's is the end of the trial. */
const CLEAR_LOSS = 2;

export interface ThreadGovernorOptions {
  /** The most threads (the physical cores). */
  maxThreads: number;
  /** Makes the engine decode with `threads` from the next step on. */
  apply: (threads: number) => void;
  /** Milliseconds on a monotonic clock (tests pass their own). */
  now?: () => number;
}

/** The counts worth trying: all cores, all but one (another process on one core), half, one. */
export function threadCandidates(maxThreads: number): number[] {
  return [...new Set([maxThreads, maxThreads - 1, Math.ceil(maxThreads / 2), 1])].filter((n) => n >= 1);
}

interface Trial {
  threads: number;
  baseline: number;
  costs: number[];
  ms: number[];
}

export class ThreadGovernor {
  private current: number;
  private readonly candidates: number[];
  private readonly nextTrialAt = new Map<number, number>();
  private readonly intervals = new Map<number, number>();
  /** Cost (ms per token) of the latest steps at the current count, all of the same size, and their time. */
  private recent: number[] = [];
  private recentMs: number[] = [];
  private recentTokens = 0;
  private trial: Trial | undefined;
  /** The cost the current count settled at for this step size: far above or below it, the machine changed. */
  private level: number | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ThreadGovernorOptions) {
    this.now = options.now ?? (() => performance.now());
    this.current = options.maxThreads;
    this.candidates = threadCandidates(options.maxThreads);
    const start = this.now();
    for (const threads of this.candidates) {
      this.intervals.set(threads, FIRST_TRIAL_INTERVAL_MS);
      this.nextTrialAt.set(threads, start + FIRST_TRIAL_INTERVAL_MS);
    }
  }

  /** The count the engine decodes with now. */
  get threads(): number {
    return this.trial?.threads ?? this.current;
  }

  /** After each llama_decode: how long it took and how many tokens it held. */
  record(ms: number, tokens: number): void {
    if (tokens <= 0 || this.candidates.length < 2) return;
    const cost = ms / tokens;
    if (this.trial) return this.recordTrial(cost, tokens);
    // steps of one size only: a prompt chunk costs far less per token than a decode step
    if (tokens !== this.recentTokens) {
      this.recent = [];
      this.recentMs = [];
      this.recentTokens = tokens;
      this.level = undefined;
    }
    this.recent.push(cost);
    this.recentMs.push(ms);
    if (this.recent.length > WINDOW_STEPS) {
      this.recent.shift();
      this.recentMs.shift();
    }
    if (!windowComplete(this.recentMs)) return;
    this.noticeChange(median(this.recent));
    this.maybeStartTrial();
  }

  /**
   * When the current count's steps cost far more or far less than they settled at (other work took
   * cores, or gave them back), every other count is worth a trial at once, however often it lost before.
   */
  private noticeChange(cost: number): void {
    if (this.level !== undefined && (cost > this.level * CLEAR_LOSS || cost < this.level / CLEAR_LOSS)) {
      const now = this.now();
      for (const threads of this.candidates) {
        this.intervals.set(threads, FIRST_TRIAL_INTERVAL_MS);
        this.nextTrialAt.set(threads, now);
      }
      this.level = cost;
    }
    this.level ??= cost;
  }

  private maybeStartTrial(): void {
    const now = this.now();
    const due = this.candidates.filter((threads) => threads !== this.current && this.nextTrialAt.get(threads)! <= now);
    if (due.length === 0) return;
    const threads = due.sort((a, b) => this.nextTrialAt.get(a)! - this.nextTrialAt.get(b)!)[0]!;
    this.trial = { threads, baseline: median(this.recent), costs: [], ms: [] };
    this.options.apply(threads);
  }

  private recordTrial(cost: number, tokens: number): void {
    const trial = this.trial!;
    // another size of step: no fair comparison, back to the current count without a verdict
    if (tokens !== this.recentTokens) return this.endTrial(false, true);
    trial.costs.push(cost);
    trial.ms.push(cost * tokens);
    if (cost > trial.baseline * CLEAR_LOSS) return this.endTrial(false);
    if (!windowComplete(trial.ms)) return;
    this.endTrial(median(trial.costs) < trial.baseline * WIN_MARGIN);
  }

  private endTrial(won: boolean, undecided = false): void {
    const { threads } = this.trial!;
    this.trial = undefined;
    const now = this.now();
    if (won) {
      // the loser becomes a candidate again soon: the other work may end
      this.intervals.set(this.current, FIRST_TRIAL_INTERVAL_MS);
      this.nextTrialAt.set(this.current, now + FIRST_TRIAL_INTERVAL_MS);
      this.current = threads;
      this.recent = [];
      this.recentMs = [];
      this.level = undefined;
    } else {
      const interval = undecided ? this.intervals.get(threads)! : Math.min(this.intervals.get(threads)! * 2, MAX_TRIAL_INTERVAL_MS);
      this.intervals.set(threads, interval);
      this.nextTrialAt.set(threads, now + interval);
    }
    this.options.apply(this.current);
  }
}

function windowComplete(stepMs: number[]): boolean {
  if (stepMs.length >= WINDOW_STEPS) return true;
  return stepMs.length >= MIN_WINDOW_STEPS && stepMs.reduce((sum, ms) => sum + ms, 0) >= WINDOW_MS;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
