// Host-memory copies of sequence states whose cells were about to be given to another request, so that
// a later prompt starting with the same tokens restores them instead of processing them again
// (llama-server's --cache-ram). Bounded in bytes; the least recently used entries go first
// (planning/cache-tiers.ts), and evicted states are handed to `onEvict` (the disk tier) and then freed.
//
// An entry is what llama_state_seq_get_data wrote for one sequence: the KV cells of `tokens` (and, for
// recurrent and hybrid models, the running state after the last of them), with the logits after that
// token when they were kept (a recurrent checkpoint), so that the same prompt again needs no decode.
// Attention-only models can restore an entry and drop its cells past the common prefix, so an entry
// serves any prompt sharing a prefix with it; a recurrent state cannot be rolled back, so there an
// entry serves prompts that start with all of its tokens, and others up to the last of the marks it
// carries (planning/recurrent-marks.ts) before they part. A state serves only prompts of the LoRA adapter
// it was computed under (its id, BASE_ADAPTER for the base model).
import type { RecurrentMark } from "../sequence.ts";
import { commonPrefixLength } from "../planning/prefix-reuse.ts";
import { evictionOrder } from "../planning/cache-tiers.ts";
import { entryServes, usableLength } from "./prefix-match.ts";
import { BASE_ADAPTER } from "../planning/adapter-turns.ts";
import { marksBefore } from "../planning/recurrent-marks.ts";

export interface PromptCacheEntry {
  readonly tokens: Int32Array;
  readonly state: Uint8Array;
  readonly logits: Float32Array | undefined;
  readonly bytes: number;
  /** The session whose request left this state, when it said (RequestSchedule.session). */
  readonly session: string | undefined;
  /** The LoRA adapter the state was computed under. */
  readonly adapter: number;
  /** Marks along `tokens` (recurrent models), ascending: the state serves prompts parting from it after one. */
  readonly marks: readonly RecurrentMark[];
  lastUsed: number;
  /** The disk tier holds this state already. */
  onDisk: boolean;
}

/** What a prompt can take from the cache: the entry and how many of its leading tokens it keeps. */
export interface PromptCacheMatch {
  entry: PromptCacheEntry;
  keep: number;
}

export interface PromptCacheStats {
  entries: number;
  bytes: number;
  limitBytes: number;
  /** Entries stored, restored (a prompt took tokens from them) and dropped to stay within the limit. */
  stored: number;
  restored: number;
  evicted: number;
  /** Admitted prompts that took tokens from this tier, and those that looked and found none worth taking. */
  hits: number;
  misses: number;
}

/** What a stored state comes with besides its tokens. */
export interface StoredStateExtras {
  /** The logits after its last token (a recurrent checkpoint). */
  logits?: Float32Array;
  session?: string;
  /** Read from the disk tier, which holds it already. */
  onDisk?: boolean;
  adapter?: number;
  /** Marks along its tokens (only those within them are kept). */
  marks?: readonly RecurrentMark[];
}

/** Evicted bytes after which the engine collects garbage at once, so that freed states leave its memory. */
const COLLECT_AFTER_EVICTED_BYTES = 64 * 1048576;

export interface PromptCacheOptions {
  /** Told each eviction (the LRU bound at work) in a sentence. */
  log?: (message: string) => void;
  /** Given each evicted entry before it is dropped (the disk tier writes what it lacks). */
  onEvict?: (entry: PromptCacheEntry) => void;
}

export class PromptCache {
  private readonly entries: PromptCacheEntry[] = [];
  private clock = 0;
  private bytes = 0;
  private stored = 0;
  private restored = 0;
  private evicted = 0;
  private hits = 0;
  private misses = 0;
  private evictedSinceCollect = 0;
  private readonly log: (message: string) => void;

  /** `canRollBack`: the model's memory can drop positions from the end (attention only). */
  constructor(readonly limitBytes: number, private readonly canRollBack: boolean, private readonly options: PromptCacheOptions = {}) {
    this.log = options.log ?? (() => {});
  }

  stats(): PromptCacheStats {
    return {
      entries: this.entries.length, bytes: this.bytes, limitBytes: this.limitBytes, stored: this.stored,
      restored: this.restored, evicted: this.evicted, hits: this.hits, misses: this.misses,
    };
  }

  /** Whether an entry of the adapter already holds every token of `tokens` as a prefix this cache could serve. */
  covers(tokens: ArrayLike<number>, adapter = BASE_ADAPTER): boolean {
    return this.entries.some((entry) => entry.adapter === adapter && entryServes(entry.tokens, tokens, this.canRollBack));
  }

  /**
   * Keeps a sequence's state for `tokens`. Entries it makes useless (a shorter prefix of it, on models
   * that can roll back) are dropped; least recently used entries go until it fits. Returns the entry, or
   * undefined when it was not kept: larger than the whole cache, or already covered by an entry.
   */
  store(tokens: ArrayLike<number>, state: Uint8Array, extras: StoredStateExtras = {}): PromptCacheEntry | undefined {
    const { logits, session, onDisk = false, adapter = BASE_ADAPTER } = extras;
    const marks = marksBefore(extras.marks ?? [], tokens.length);
    const bytes = state.byteLength + (logits?.byteLength ?? 0) + tokens.length * 4 + marks.reduce((sum, mark) => sum + mark.state.byteLength, 0);
    if (bytes > this.limitBytes || tokens.length === 0) return undefined;
    if (this.covers(tokens, adapter)) return undefined;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.adapter === adapter && entryServes(tokens, entry.tokens, this.canRollBack)) this.drop(i, false);
    }
    const evicted = evictionOrder(this.entries, bytes, this.bytes, this.limitBytes).map((i) => this.entries[i]!);
    for (const entry of evicted) {
      this.drop(this.entries.indexOf(entry), true);
      this.evicted++;
      this.log(`prompt cache: evicted ${entry.tokens.length} tokens (${size(entry.bytes)}), least recently used, to keep ${tokens.length} tokens (${size(bytes)}) within ${size(this.limitBytes)}`);
    }
    const entry: PromptCacheEntry = { tokens: Int32Array.from(tokens), state, logits, bytes, session, adapter, marks, lastUsed: ++this.clock, onDisk };
    this.entries.push(entry);
    this.bytes += bytes;
    this.stored++;
    this.collectIfMuchWasFreed();
    return entry;
  }

  /** The adapter's entry that gives `prompt` the most tokens, and how many: at most `prompt.length - 1` unless the entry carries logits. */
  find(prompt: ArrayLike<number>, adapter = BASE_ADAPTER): PromptCacheMatch | undefined {
    let best: PromptCacheMatch | undefined;
    for (const entry of this.entries) {
      if (entry.adapter !== adapter) continue;
      const keep = usableLength(entry.tokens, entry.logits !== undefined, prompt, this.canRollBack, entry.marks.map((mark) => mark.length));
      if (keep > 0 && keep > (best?.keep ?? 0)) best = { entry, keep };
    }
    return best;
  }

  /** The most tokens `prompt` shares from its start with any of the adapter's entries, whether or not the entry could serve it. */
  longestSharedPrefix(prompt: ArrayLike<number>, adapter = BASE_ADAPTER): number {
    return this.entries.reduce((longest, entry) => (entry.adapter === adapter ? Math.max(longest, commonPrefixLength(entry.tokens, prompt)) : longest), 0);
  }

  /** Marks the entry used by a restore (most recently used now). */
  touch(entry: PromptCacheEntry): void {
    entry.lastUsed = ++this.clock;
    this.restored++;
  }

  /** A request of `session` arrived: its states are the most recently used now, so they outlive quiet sessions'. */
  touchSession(session: string): void {
    for (const entry of this.entries) if (entry.session === session) entry.lastUsed = ++this.clock;
  }

  /** Counts an admitted prompt that took tokens from this tier (hit) or looked and took none (miss). */
  countLookup(hit: boolean): void {
    if (hit) this.hits++;
    else this.misses++;
  }

  /** Entries the disk tier does not hold yet, most recently used first. */
  notOnDisk(): PromptCacheEntry[] {
    return this.entries.filter((entry) => !entry.onDisk).sort((a, b) => b.lastUsed - a.lastUsed);
  }

  /** Drops every entry, handing each to onEvict first when `keepOnDisk` (an unload: the disk tier keeps them). */
  clear(keepOnDisk = false): void {
    if (keepOnDisk) for (const entry of this.entries) this.options.onEvict?.(entry);
    this.entries.length = 0;
    this.bytes = 0;
  }

  private drop(index: number, evicting: boolean): void {
    const entry = this.entries[index]!;
    if (evicting) this.options.onEvict?.(entry);
    this.bytes -= entry.bytes;
    this.evictedSinceCollect += entry.bytes;
    this.entries.splice(index, 1);
  }

  /**
   * States are ordinary buffers that the collector frees when it runs, which may be much later: a cache
   * within its cap could leave the process holding many times the cap. Collecting once every 64 MiB of
   * dropped states keeps the process within the cap plus that.
   */
  private collectIfMuchWasFreed(): void {
    if (this.evictedSinceCollect < COLLECT_AFTER_EVICTED_BYTES) return;
    this.evictedSinceCollect = 0;
    Bun.gc(true);
  }
}

function size(bytes: number): string {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}
