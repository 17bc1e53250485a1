// The disk tier of the prompt cache (--cache-disk): sequence states kept in files, so that a restart,
// an unload or a model swap finds them again. One folder per state identity (state-key.ts) under one
// directory that every engine shares, with one size cap for all of it.
//
// - Written behind the engine's back: states are queued (at most MAX_PENDING_BYTES; the oldest pending
//   state is dropped, with a log line, when writes fall behind) and written one at a time, no faster than
//   WRITE_BYTES_PER_SECOND on average (planning/cache-tiers.ts WriteBudget).
// - Found by the longest token prefix, from an index of every file's header and tokens, read when the
//   engine starts; states shorter than DISK_MIN_TOKENS are not worth a file (processing them again costs
//   about what reading them does).
// - Read whole and checked before use (state-file.ts): a truncated, damaged or foreign file is logged,
//   removed and never restored.
// - Evicted least recently used by size across all identities (a hit renews a file's time).
import { createHash } from "node:crypto";
import { mkdir, readdir, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { evictionOrder, WriteBudget } from "../planning/cache-tiers.ts";
import { entryServes, usableLength } from "./prefix-match.ts";
import { marksBytes, readStateFile, readStateHeader, stateFileBytes, StateFileError, writeStateFile, type SavedState } from "./state-file.ts";
import { marksBefore } from "../planning/recurrent-marks.ts";

/** States shorter than this stay in memory only. */
export const DISK_MIN_TOKENS = 512;
/** Average write rate, and the burst written at once. */
export const WRITE_BYTES_PER_SECOND = 256 * 1048576;
const WRITE_BURST_BYTES = 512 * 1048576;
/** States waiting to be written, in bytes. */
export const MAX_PENDING_BYTES = 1024 * 1048576;
/** Files per identity the index holds (each keeps its tokens in memory). */
export const MAX_INDEX_ENTRIES = 4096;
const STATE_SUFFIX = ".state";

export interface DiskEntry {
  readonly path: string;
  readonly tokens: Int32Array;
  readonly hasLogits: boolean;
  /** The lengths its marks cover (recurrent models), ascending. */
  readonly marks: readonly number[];
  readonly bytes: number;
  readonly session: string | undefined;
  lastUsed: number;
}

export interface DiskMatch {
  entry: DiskEntry;
  keep: number;
}

export interface DiskStoreStats {
  entries: number;
  bytes: number;
  limitBytes: number;
  written: number;
  loaded: number;
  /** Files refused (truncated, damaged, foreign) or that could not be written. */
  failed: number;
  evicted: number;
  /** States dropped before they were written, because writes fell behind. */
  dropped: number;
  hits: number;
  misses: number;
}

export interface DiskStoreOptions {
  /** The directory all identities share. */
  dir: string;
  /** Bytes all identities' files may take. */
  limitBytes: number;
  /** This engine's state identity. */
  key: string;
  canRollBack: boolean;
  log?: (level: "info" | "warn" | "debug", message: string) => void;
  /** ms clock of the write budget (tests). */
  now?: () => number;
}

interface PendingWrite {
  saved: SavedState;
  bytes: number;
  /** Told when the state is on disk (or failed). */
  done?: (written: boolean) => void;
}

export class DiskPromptStore {
  private readonly entries: DiskEntry[] = [];
  private readonly folder: string;
  private readonly pending: PendingWrite[] = [];
  private pendingBytes = 0;
  private writing: Promise<void> | undefined;
  /** The state being written now (it counts as held, like pending ones). */
  private current: SavedState | undefined;
  private readonly budget: WriteBudget;
  private readonly log: NonNullable<DiskStoreOptions["log"]>;
  private closed = false;
  private readonly counts = { written: 0, loaded: 0, failed: 0, evicted: 0, dropped: 0, hits: 0, misses: 0 };

  private constructor(private readonly options: DiskStoreOptions) {
    this.folder = join(options.dir, options.key.slice(0, 16));
    this.budget = new WriteBudget(WRITE_BYTES_PER_SECOND, WRITE_BURST_BYTES, options.now);
    this.log = options.log ?? (() => {});
  }

  /** Opens the tier and indexes the files of this identity; a file that cannot be read is logged and removed. */
  static async open(options: DiskStoreOptions): Promise<DiskPromptStore> {
    const store = new DiskPromptStore(options);
    await mkdir(store.folder, { recursive: true });
    await store.index();
    return store;
  }

  stats(): DiskStoreStats {
    const bytes = this.entries.reduce((sum, entry) => sum + entry.bytes, 0);
    return { entries: this.entries.length, bytes, limitBytes: this.options.limitBytes, ...this.counts };
  }

  /** The entry that gives `prompt` the most tokens, and how many. */
  find(prompt: ArrayLike<number>): DiskMatch | undefined {
    let best: DiskMatch | undefined;
    for (const entry of this.entries) {
      const keep = usableLength(entry.tokens, entry.hasLogits, prompt, this.options.canRollBack, entry.marks);
      if (keep > 0 && keep > (best?.keep ?? 0)) best = { entry, keep };
    }
    return best;
  }

  /** Whether a file, or a state waiting to be written, serves every prompt a state for `tokens` would. */
  covers(tokens: ArrayLike<number>): boolean {
    const serves = (held: ArrayLike<number>) => entryServes(held, tokens, this.options.canRollBack);
    return this.entries.some((entry) => serves(entry.tokens)) || this.pending.some((write) => serves(write.saved.tokens))
      || (this.current !== undefined && serves(this.current.tokens));
  }

  /** Whether a state for `tokens` is worth a file: long enough, and not served by one already. */
  wants(tokens: ArrayLike<number>): boolean {
    return !this.closed && tokens.length >= DISK_MIN_TOKENS && !this.covers(tokens);
  }

  /** Counts an admitted prompt that took tokens from this tier (hit) or looked and took none (miss). */
  countLookup(hit: boolean): void {
    if (hit) this.counts.hits++;
    else this.counts.misses++;
  }

  /**
   * Queues a state to be written; `done` is told whether it reached the disk. Returns false when it is not
   * wanted. Writes that fall behind drop the oldest pending states.
   */
  enqueue(saved: SavedState, done?: (written: boolean) => void): boolean {
    if (!this.wants(saved.tokens)) return false;
    const bytes = stateFileBytes(512, saved.tokens.length, saved.state.byteLength, saved.logits?.length ?? 0,
      marksBytes(saved.marks?.map((mark) => ({ bytes: mark.state.byteLength }))));
    if (bytes > this.options.limitBytes) return false;
    this.pending.push({ saved, bytes, ...(done ? { done } : {}) });
    this.pendingBytes += bytes;
    while (this.pendingBytes > MAX_PENDING_BYTES && this.pending.length > 1) {
      const dropped = this.pending.shift()!;
      this.pendingBytes -= dropped.bytes;
      this.counts.dropped++;
      dropped.done?.(false);
      this.log("warn", `prompt cache on disk: dropped a state of ${dropped.saved.tokens.length} tokens before writing it, ${mib(MAX_PENDING_BYTES)} waiting already (the disk is slower than the states coming in)`);
    }
    this.writing ??= this.writeQueued().finally(() => (this.writing = undefined));
    return true;
  }

  /** Reads an entry's state, checked whole; undefined (logged, file removed) when it cannot be used. */
  async load(entry: DiskEntry): Promise<SavedState | undefined> {
    try {
      const saved = await readStateFile(entry.path, this.options.key);
      this.counts.loaded++;
      entry.lastUsed = Date.now();
      await utimes(entry.path, new Date(), new Date()).catch(() => {});
      return saved;
    } catch (error) {
      this.refuse(entry, error);
      return undefined;
    }
  }

  /** Resolves once every queued state is written (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Writes nothing more; pending states are dropped. */
  close(): void {
    this.closed = true;
    for (const write of this.pending.splice(0)) write.done?.(false);
    this.pendingBytes = 0;
  }

  private async writeQueued(): Promise<void> {
    while (this.pending.length > 0 && !this.closed) {
      const write = this.pending[0]!;
      const delay = this.budget.delayFor(write.bytes);
      if (delay > 0) await Bun.sleep(delay);
      if (this.pending[0] !== write) continue;
      this.pending.shift();
      this.pendingBytes -= write.bytes;
      this.budget.take(write.bytes);
      // (not `done?.(await …)`: an absent callback would skip the write with its argument)
      this.current = write.saved;
      const written = await this.write(write.saved).finally(() => (this.current = undefined));
      write.done?.(written);
    }
  }

  private async write(saved: SavedState): Promise<boolean> {
    const name = createHash("sha256").update(new Uint8Array(saved.tokens.buffer, saved.tokens.byteOffset, saved.tokens.byteLength)).digest("hex").slice(0, 32);
    const path = join(this.folder, `${name}${STATE_SUFFIX}`);
    try {
      await mkdir(this.folder, { recursive: true });
      const bytes = await writeStateFile(path, this.options.key, saved);
      for (let i = this.entries.length - 1; i >= 0; i--) {
        if (this.entries[i]!.path === path || entryServes(saved.tokens, this.entries[i]!.tokens, this.options.canRollBack)) {
          const superseded = this.entries.splice(i, 1)[0]!;
          if (superseded.path !== path) await rm(superseded.path, { force: true });
        }
      }
      const marks = marksBefore(saved.marks ?? [], saved.tokens.length).map((mark) => mark.length);
      this.entries.push({ path, tokens: saved.tokens, hasLogits: saved.logits !== undefined, marks, bytes, session: saved.session, lastUsed: Date.now() });
      this.counts.written++;
      this.log("debug", `prompt cache on disk: wrote ${saved.tokens.length} tokens (${mib(bytes)})`);
      await this.evictOverCap(path, bytes);
      return true;
    } catch (error) {
      this.counts.failed++;
      this.log("warn", `prompt cache on disk: cannot write a state of ${saved.tokens.length} tokens to "${path}": ${(error as Error).message}`);
      return false;
    }
  }

  /**
   * Least recently used files of every identity go until all of them fit the cap; never `written`, the file
   * just written (file times are only as fine as the kernel's clock tick, so it may tie with older ones).
   */
  private async evictOverCap(written: string, writtenBytes: number): Promise<void> {
    const files = (await listStateFiles(this.options.dir)).filter((file) => file.path !== written);
    const total = files.reduce((sum, file) => sum + file.bytes, 0) + writtenBytes;
    if (total <= this.options.limitBytes) return;
    for (const index of evictionOrder(files, 0, total, this.options.limitBytes)) {
      const file = files[index]!;
      await rm(file.path, { force: true });
      this.counts.evicted++;
      const own = this.entries.findIndex((entry) => entry.path === file.path);
      if (own >= 0) this.entries.splice(own, 1);
      this.log("info", `prompt cache on disk: evicted "${file.path}" (${mib(file.bytes)}), least recently used, to stay within ${mib(this.options.limitBytes)}`);
    }
  }

  private async index(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.folder)).filter((name) => name.endsWith(STATE_SUFFIX));
    } catch {
      return;
    }
    for (const name of names.slice(0, MAX_INDEX_ENTRIES)) {
      const path = join(this.folder, name);
      try {
        const { header, tokens, fileBytes } = await readStateHeader(path);
        if (header.key !== this.options.key) throw new StateFileError(path, "it was saved for another model or other settings");
        const { mtimeMs } = await stat(path);
        const marks = (header.marks ?? []).map((mark) => mark.length);
        this.entries.push({ path, tokens, hasLogits: header.logitsCount > 0, marks, bytes: fileBytes, session: header.session, lastUsed: mtimeMs });
      } catch (error) {
        this.refuse({ path }, error);
      }
    }
  }

  private refuse(entry: { path: string }, error: unknown): void {
    this.counts.failed++;
    const index = this.entries.findIndex((e) => e.path === entry.path);
    if (index >= 0) this.entries.splice(index, 1);
    this.log("warn", `prompt cache on disk: skipped "${entry.path}": ${(error as Error).message}; the file is removed`);
    void rm(entry.path, { force: true }).catch(() => {});
  }
}

/** Every state file under `dir` (all identities), with its size and time. */
async function listStateFiles(dir: string): Promise<Array<{ path: string; bytes: number; lastUsed: number }>> {
  const files: Array<{ path: string; bytes: number; lastUsed: number }> = [];
  const folders = await readdir(dir).catch(() => [] as string[]);
  for (const folder of folders) {
    const names = await readdir(join(dir, folder)).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith(STATE_SUFFIX)) continue;
      const path = join(dir, folder, name);
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile()) files.push({ path, bytes: info.size, lastUsed: info.mtimeMs });
    }
  }
  return files;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
