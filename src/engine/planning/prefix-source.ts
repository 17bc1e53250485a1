// Where an admitted prompt's leading tokens come from: the sequence's own memory, another sequence's
// cells, a state kept in host memory, or one kept on disk. A decision over how many tokens each source
// would give; the scheduler finds those lengths and carries out the choice.
//
// The sequence's own memory costs nothing to keep. Every other source replaces it: a copy within one KV
// pool only tags cells, so any gain is worth it; a copy across KV streams, a host-memory restore and a
// disk load move a whole saved state, so they must give PROMPT_CACHE_MIN_TOKENS more than the best
// cheaper source (fewer tokens are processed again faster than a state is copied out and back). A disk
// state is read into host memory off the engine's thread first, so it is chosen only over what it
// gives beyond host memory and the live sequences.
import type { ReusePlan } from "./prefix-reuse.ts";

/**
 * A sequence's memory goes to the host prompt cache before it is dropped only when it would lose at least
 * this many tokens, and a saved state replaces a sequence's memory only when it gives this many more.
 */
export const PROMPT_CACHE_MIN_TOKENS = 64;

export type PrefixChoice<Slot, Match> =
  | { kind: "own"; plan: ReusePlan }
  | { kind: "copy"; from: Slot; keep: number }
  | { kind: "cache"; match: Match; keep: number }
  | { kind: "disk"; match: Match; keep: number };

export interface PrefixOffers<Slot, Match> {
  own: ReusePlan;
  /** Other sequences' cached prefixes this prompt shares (attention-only models). */
  copies: ReadonlyArray<{ from: Slot; keep: number }>;
  /** All sequences take cells from one pool: a copy only tags cells. */
  sharedPool: boolean;
  /** The host prompt cache's best entry for this prompt. */
  cache?: { match: Match; keep: number };
  /** The disk tier's best entry for this prompt. */
  disk?: { match: Match; keep: number };
  /** Prompts with images keep their own memory only (an image is kept whole or processed again whole). */
  hasImages: boolean;
}

/** The source that gives the prompt the most tokens, each needing its margin over the cheaper ones. */
export function choosePrefixSource<Slot, Match>(offers: PrefixOffers<Slot, Match>): PrefixChoice<Slot, Match> {
  let best: PrefixChoice<Slot, Match> = { kind: "own", plan: offers.own };
  let bestKeep = offers.own.keep;
  if (offers.hasImages) return best;
  const copyGain = offers.sharedPool ? 1 : PROMPT_CACHE_MIN_TOKENS;
  for (const copy of offers.copies) {
    if (copy.keep >= bestKeep + copyGain) {
      best = { kind: "copy", from: copy.from, keep: copy.keep };
      bestKeep = copy.keep;
    }
  }
  if (offers.cache && offers.cache.keep >= bestKeep + PROMPT_CACHE_MIN_TOKENS) {
    best = { kind: "cache", ...offers.cache };
    bestKeep = offers.cache.keep;
  }
  if (offers.disk && offers.disk.keep >= bestKeep + PROMPT_CACHE_MIN_TOKENS) best = { kind: "disk", ...offers.disk };
  return best;
}

/** Prompt tokens a choice gives without processing them. */
export function reusedTokens(choice: PrefixChoice<unknown, unknown>): number {
  return choice.kind === "own" ? choice.plan.keep : choice.keep;
}
