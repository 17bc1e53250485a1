// The n-gram drafter: prompt lookup over each sequence's own tokens; no model, no memory.
import type { Drafter, DraftRequest } from "./drafter.ts";
import { lookupDraft } from "./ngram.ts";

export class NgramDrafter implements Drafter {
  constructor(private readonly ngramMax: number, private readonly ngramMin: number) {}

  draft(requests: DraftRequest[]): number[][] {
    return requests.map((r) => lookupDraft(r.tokens, r.max, this.ngramMax, this.ngramMin));
  }

  forget(): void {}
  dispose(): void {}
}
