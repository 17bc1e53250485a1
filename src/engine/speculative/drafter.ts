// What proposes draft tokens: a draft model or the n-gram lookup. One call drafts for every sequence
// that speculates this step, so a draft model runs its sequences batched.

export interface DraftRequest {
  seq: number;
  /** Every token of the sequence so far: the target's memory plus the token it decodes next. */
  tokens: readonly number[];
  /** Most tokens to propose. */
  max: number;
}

export interface Drafter {
  /** Draft tokens per request, in request order (an empty array: nothing to propose). */
  draft(requests: DraftRequest[]): number[][];
  /** The sequence's memory was emptied (a new request, or a failure): forget what is held for it. */
  forget(seq: number): void;
  dispose(): void;
}
