// Host-memory copies of sequence states whose cells were about to be given to another request, so that
// a later prompt starting with the same tokens restores them instead of processing them again
// (llama-server's --cache-ram). Bounded in bytes; the least recently used entries go first.
//
// An entry is what llama_state_seq_get_data wrote for one sequence: the KV cells of `tokens` (and, for
// recurrent and hybrid models, the running state after the last of them), with the logits after that
// token when they were kept (a recurrent checkpoint), so that the same prompt again needs no decode.
// Attention-only models can restore an entry and drop its cells past the common prefix, so an entry
// serves any prompt sharing a prefix with it; a recurrent state cannot be rolled back, so there an
// entry serves only prompts that start with all of its tokens.
import { commonPrefixLength } from "./prefix-reuse.ts";

export interface PromptCacheEntry {
  readonly tokens: Int32Array;
  readonly state: Uint8Array;
  readonly logits: Float32Array | undefined;
  readonly bytes: number;
  lastUsed: number;
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
}

export class PromptCache {
  private readonly entries: PromptCacheEntry[] = [];
  private clock = 0;
  private bytes = 0;
  private stored = 0;
  private restored = 0;
  private evicted = 0;

  /**
   * `canRollBack`: the model's memory can drop positions from the end (attention only). `log` is told
   * each eviction (the LRU bound at work) in a sentence.
   */
  constructor(readonly limitBytes: number, private readonly canRollBack: boolean, private readonly log: (message: string) => void = () => {}) {}

  stats(): PromptCacheStats {
    return { entries: this.entries.length, bytes: this.bytes, limitBytes: this.limitBytes, stored: this.stored, restored: this.restored, evicted: this.evicted };
  }

  /** Whether an entry already holds every token of `tokens` as a prefix this cache could serve. */
  covers(tokens: ArrayLike<number>): boolean {
    return this.entries.some((entry) => this.supersedes(entry.tokens, tokens));
  }

  /**
   * Keeps a sequence's state for `tokens`. Entries it makes useless (a shorter prefix of it, on models
   * that can roll back) are dropped; older entries go until it fits. Returns false when it was not kept:
   * larger than the whole cache, or already covered by an entry.
   */
  store(tokens: ArrayLike<number>, state: Uint8Array, logits?: Float32Array): boolean {
    const bytes = state.byteLength + (logits?.byteLength ?? 0) + tokens.length * 4;
    if (bytes > this.limitBytes || tokens.length === 0) return false;
    if (this.covers(tokens)) return false;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.supersedes(tokens, this.entries[i]!.tokens)) this.remove(i);
    }
    while (this.bytes + bytes > this.limitBytes && this.entries.length > 0) {
      const oldest = this.entries.reduce((best, entry, i) => (entry.lastUsed < this.entries[best]!.lastUsed ? i : best), 0);
      const entry = this.entries[oldest]!;
      this.remove(oldest);
      this.evicted++;
      this.log(`prompt cache: evicted ${entry.tokens.length} tokens (${size(entry.bytes)}), least recently used, to keep ${tokens.length} tokens (${size(bytes)}) within ${size(this.limitBytes)}`);
    }
    this.entries.push({ tokens: Int32Array.from(tokens), state, logits, bytes, lastUsed: ++this.clock });
    this.bytes += bytes;
    this.stored++;
    return true;
  }

  /** The entry that gives `prompt` the most tokens, and how many: at most `prompt.length - 1` unless the entry carries logits. */
  find(prompt: ArrayLike<number>): PromptCacheMatch | undefined {
    let best: PromptCacheMatch | undefined;
    for (const entry of this.entries) {
      const keep = this.usableLength(entry, prompt);
      if (keep > 0 && keep > (best?.keep ?? 0)) best = { entry, keep };
    }
    return best;
  }

  /** The most tokens `prompt` shares from its start with any entry's tokens, whether or not the entry could serve it. */
  longestSharedPrefix(prompt: ArrayLike<number>): number {
    return this.entries.reduce((longest, entry) => Math.max(longest, commonPrefixLength(entry.tokens, prompt)), 0);
  }

  /** Marks the entry used by a restore (most recently used now). */
  touch(entry: PromptCacheEntry): void {
    entry.lastUsed = ++this.clock;
    this.restored++;
  }

  clear(): void {
    this.entries.length = 0;
    this.bytes = 0;
  }

  private usableLength(entry: PromptCacheEntry, prompt: ArrayLike<number>): number {
    const common = commonPrefixLength(entry.tokens, prompt);
    if (this.canRollBack) return Math.min(common, prompt.length - 1);
    if (common < entry.tokens.length) return 0;
    // the whole prompt is the entry's: its first token needs the logits after the last one
    if (entry.tokens.length === prompt.length && !entry.logits) return 0;
    return entry.tokens.length;
  }

  /** Whether an entry for `longer` serves every prompt an entry for `shorter` serves. */
  private supersedes(longer: ArrayLike<number>, shorter: ArrayLike<number>): boolean {
    if (longer.length < shorter.length || commonPrefixLength(longer, shorter) < shorter.length) return false;
    return this.canRollBack || longer.length === shorter.length;
  }

  private remove(index: number): void {
    this.bytes -= this.entries[index]!.bytes;
    this.entries.splice(index, 1);
  }
}

function size(bytes: number): string {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}
