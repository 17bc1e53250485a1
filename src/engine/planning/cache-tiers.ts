// What the prompt cache keeps, where, and what it lets go: decisions over sizes, ages and token counts.
//
// Tiers: a sequence's own memory, then host memory (--cache-ram), then disk (--cache-disk). A sequence's
// state moves to host memory when its cells are about to go to another request and it would lose enough
// tokens; host-memory entries are written to disk behind the engine's back, at a bounded rate, so that a
// restart, an unload or a model swap finds them again. Each tier evicts its least recently used entries
// by size until a new one fits. Session hints keep a session's states fresh: a request of a session marks
// that session's entries used, so they outlive entries of sessions that went quiet.
import { PROMPT_CACHE_MIN_TOKENS } from "./prefix-source.ts";

/** An entry of a tier as eviction sees it. */
export interface TierEntry {
  bytes: number;
  /** Larger is more recent. */
  lastUsed: number;
}

/**
 * Indices of the entries to evict, least recently used first, so that `incomingBytes` more fit within
 * `limitBytes` beside the `usedBytes` held now; every entry when even that does not make it fit.
 */
export function evictionOrder(entries: readonly TierEntry[], incomingBytes: number, usedBytes: number, limitBytes: number): number[] {
  const order = entries.map((_, i) => i).sort((a, b) => entries[a]!.lastUsed - entries[b]!.lastUsed);
  const evicted: number[] = [];
  let used = usedBytes;
  for (const index of order) {
    if (used + incomingBytes <= limitBytes) break;
    evicted.push(index);
    used -= entries[index]!.bytes;
  }
  return evicted;
}

/** What a sequence about to lose its memory from `keep` on holds, and what else holds it already. */
export interface LeavingSequence {
  cachedLength: number;
  keep: number;
  /** Leading tokens a recurrent checkpoint covers (0: none). */
  checkpointLength: number;
  /** A host-cache entry serves every prompt the whole memory would. */
  covered: boolean;
  /** Another sequence holds the whole memory as a prefix it could give. */
  heldElsewhere: boolean;
}

/**
 * Which states of a leaving sequence go to host memory: its recurrent checkpoint when that is lost and
 * long enough, and its whole memory when it loses at least PROMPT_CACHE_MIN_TOKENS that nothing else holds.
 */
export function statesToKeep(s: LeavingSequence): { checkpoint: boolean; whole: boolean } {
  const checkpoint = s.checkpointLength > s.keep && s.checkpointLength >= PROMPT_CACHE_MIN_TOKENS;
  const whole = s.cachedLength - s.keep >= PROMPT_CACHE_MIN_TOKENS && s.cachedLength !== s.checkpointLength
    && !s.covered && !s.heldElsewhere;
  return { checkpoint, whole };
}

/**
 * A token bucket over bytes: disk writes take from it and wait when it is empty, so that the cache never
 * writes faster than `bytesPerSecond` on average (a burst of up to `burstBytes`). `now` in ms.
 */
export class WriteBudget {
  private available: number;
  private updatedAt: number;

  constructor(readonly bytesPerSecond: number, readonly burstBytes: number, private readonly now: () => number = () => performance.now()) {
    this.available = burstBytes;
    this.updatedAt = now();
  }

  /** Ms to wait before `bytes` may be written (0: now); a write larger than the burst waits for a full bucket. */
  delayFor(bytes: number): number {
    this.refill();
    const needed = Math.min(bytes, this.burstBytes);
    return this.available >= needed ? 0 : Math.ceil(((needed - this.available) / this.bytesPerSecond) * 1000);
  }

  /** Takes `bytes` from the bucket (it may go below zero for a write larger than the burst). */
  take(bytes: number): void {
    this.refill();
    this.available -= bytes;
  }

  private refill(): void {
    const now = this.now();
    this.available = Math.min(this.burstBytes, this.available + ((now - this.updatedAt) / 1000) * this.bytesPerSecond);
    this.updatedAt = now;
  }
}
