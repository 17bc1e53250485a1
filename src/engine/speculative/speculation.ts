// Speculative decoding as the scheduler sees it: before a decode step, `plan` asks the drafter for
// tokens for each generating sequence (within its back-off pace, the request's own limit, the context
// and the batch); the scheduler puts them after the sequence's next token and verifies them from the
// target's logits; `settle` then feeds what was accepted back into the pace.
//
// Lockstep (recurrent and hybrid targets such as LFM2): llama.cpp splits such a batch into micro-batches
// that hold the same number of tokens of every sequence, so one sequence verifying 1+4 tokens beside
// others decoding 1 costs a second pass over the weights: a whole extra step for the batch, which the
// one drafting sequence cannot win back (measured on LFM2-350M, 4 streams, 0% acceptance: 0.89x plain
// with drafts at different steps, 0.96x with drafts in the same steps). So there a step drafts for all its
// generating sequences, every draft cut to the shortest, or for none.
//
// A draft model's agreement with the target is mostly a property of the pair, so with one a new request
// starts from the back-off the latest round reached (paused as long as it paused) instead of learning
// again from the full draft length; n-gram matches depend on each request's own prompt, so there every
// request starts drafting at once.
import type { ActiveRequest, SequenceSlot } from "../sequence.ts";
import type { Drafter, DraftRequest } from "./drafter.ts";
import { DraftPace } from "./pace.ts";

export class Speculation {
  private readonly paces = new WeakMap<ActiveRequest, DraftPace>();
  /** With a draft model: the pause of the latest settled round (0 after a round that accepted at least half). */
  private latestPause = 0;
  draftedTokens = 0;
  acceptedTokens = 0;

  constructor(
    private readonly drafter: Drafter, readonly maxDraftTokens: number, readonly method: "draft" | "ngram",
    readonly draftModelPath?: string, private readonly lockstep = false,
  ) {}

  /** What ModelInfo reports. */
  get summary(): { method: "draft" | "ngram"; draftModelPath?: string; maxDraftTokens: number } {
    return { method: this.method, ...(this.draftModelPath ? { draftModelPath: this.draftModelPath } : {}), maxDraftTokens: this.maxDraftTokens };
  }

  private paceOf(active: ActiveRequest): DraftPace {
    let pace = this.paces.get(active);
    if (!pace) {
      const limit = active.request.draftTokens === undefined ? this.maxDraftTokens : Math.min(this.maxDraftTokens, active.request.draftTokens);
      pace = new DraftPace(Math.max(0, limit), this.method === "draft" ? this.latestPause : 0);
      this.paces.set(active, pace);
    }
    return pace;
  }

  /**
   * Draft tokens for the generating slots that speculate this step. `batchCapacity` is the step's
   * token budget; `contextPerSequence` bounds how far a sequence may run ahead.
   */
  plan(slots: SequenceSlot[], batchCapacity: number, contextPerSequence: number): Map<SequenceSlot, number[]> {
    const planned = new Map<SequenceSlot, number[]>();
    if (slots.length === 0) return planned;
    const room = Math.floor((batchCapacity - slots.length) / slots.length);
    const chosen: SequenceSlot[] = [];
    const requests: DraftRequest[] = [];
    for (const slot of slots) {
      const active = slot.active!;
      // a draft model cannot see image embeddings; the positions they fill hold no real tokens
      if (active.images.length > 0) continue;
      const pace = this.paceOf(active);
      if (pace.max === 0 || !pace.drafting(active.generated)) continue;
      // the pending token and the drafts must fit the context, and the output its length limit
      const max = Math.min(pace.length, room, active.maxTokens - active.generated - 1, contextPerSequence - slot.cached.length - 2);
      if (max < 1) continue;
      chosen.push(slot);
      requests.push({ seq: slot.seq, tokens: [...slot.cached, active.pendingToken], max });
    }
    if (requests.length === 0 || (this.lockstep && chosen.length < slots.length)) return planned;
    if (this.lockstep) {
      const shortest = Math.min(...requests.map((r) => r.max));
      for (const r of requests) r.max = shortest;
    }
    const drafts = this.drafter.draft(requests);
    const length = this.lockstep ? Math.min(...drafts.map((d) => d.length)) : Infinity;
    if (length === 0) return planned;
    chosen.forEach((slot, i) => {
      const draft = drafts[i]!.slice(0, length);
      if (draft.length > 0) planned.set(slot, draft);
    });
    return planned;
  }

  /** Records a verified draft: usage counts it per request and in total; the pace adapts. */
  settle(active: ActiveRequest, drafted: number, accepted: number): void {
    this.draftedTokens += drafted;
    this.acceptedTokens += accepted;
    const pace = this.paceOf(active);
    pace.settle(drafted, accepted, active.generated);
    if (accepted === 0 || accepted * 2 >= drafted) this.latestPause = pace.lastPause;
  }

  forget(seq: number): void {
    this.drafter.forget(seq);
  }

  dispose(): void {
    this.drafter.dispose();
  }
}
