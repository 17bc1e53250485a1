// When every sequence is busy: whether a prompt still being processed from far back (another session's
// cold turn) gives its sequence to a waiting request that is mostly cached (an agent's next turn). The
// cold prompt's work so far goes to the host cache and it waits at the head of the queue; when it gets a
// sequence again it restores that state and goes on where it stopped, so it loses a copy of its state, not
// its work. Without this a warm turn of a few hundred tokens waits for a cold prefill of thousands.
//
// Bounded both ways: the waiting request's uncached work must be at most 1/PREEMPT_WORK_RATIO of what the
// prompt has left (and that at least PREEMPT_MIN_LEFT tokens), a prompt yields its sequence at most
// MAX_YIELDS times, and a request never takes the sequence of one with a lower priority value.

/** The prompt left must be at least this many times the waiting request's uncached work. */
export const PREEMPT_WORK_RATIO = 4;
/** A prompt with fewer tokens than this left to process keeps its sequence: it ends soon anyway. */
export const PREEMPT_MIN_LEFT = 1024;
/** Times one prompt may give its sequence away. */
export const MAX_YIELDS = 1;

/** A running prompt as preemption sees it. */
export interface RunningPrompt {
  /** Prompt tokens it has yet to process. */
  left: number;
  /** Lower goes first (vLLM's `priority`). */
  priority: number;
  /** Times it gave its sequence away already. */
  yielded: number;
  /** Its prompt has images (their embeddings cannot be kept in host memory) or it cannot yield otherwise. */
  pinned: boolean;
}

/** The waiting request admission would choose next, with the prompt tokens it would still process. */
export interface WaitingWork {
  uncachedTokens: number;
  priority: number;
}

/** Whether this running prompt may give its sequence to some waiting request at all. */
export function mayYield(run: RunningPrompt): boolean {
  return !run.pinned && run.yielded < MAX_YIELDS && run.left >= PREEMPT_MIN_LEFT;
}

/**
 * The index of the running prompt that gives its sequence to `waiting`: of those that may, with a priority
 * value no lower than the waiting request's, the one with the most left, when that is at least
 * PREEMPT_WORK_RATIO times the waiting request's uncached work. Undefined: nobody yields.
 */
export function choosePreemption(waiting: WaitingWork, running: readonly RunningPrompt[]): number | undefined {
  let victim: number | undefined;
  running.forEach((run, index) => {
    if (!mayYield(run) || run.priority < waiting.priority) return;
    if (run.left < PREEMPT_WORK_RATIO * Math.max(1, waiting.uncachedTokens)) return;
    if (victim === undefined || run.left > running[victim]!.left) victim = index;
  });
  return victim;
}
