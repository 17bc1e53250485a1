// The sequences' memory, as the scheduler's planners decide it: which idle sequence a prompt gets, what
// each source offers its prompt (planning/prefix-source.ts), and carrying out the choice: keeping, copying
// or restoring a prefix, saving what a sequence is about to lose into the host cache
// (planning/cache-tiers.ts), making room in a shared KV pool, and feeding the disk tier.
//
// A state computed under one LoRA adapter is wrong under any other: a prompt reuses only what was computed
// under its own adapter (SequenceSlot.adapterId), in live sequences, the host cache (keyed by adapter) and
// the disk tier (one store per adapter, its identity naming the adapter file).
import type { LlamaContext } from "../../ffi/llama.ts";
import type { ActiveRequest, RecurrentMark, SequenceSlot } from "./sequence.ts";
import { commonPrefixLength, planReuse, type ReusePlan } from "./planning/prefix-reuse.ts";
import { choosePrefixSource, PROMPT_CACHE_MIN_TOKENS, type PrefixChoice } from "./planning/prefix-source.ts";
import { statesToKeep } from "./planning/cache-tiers.ts";
import type { PromptCache, PromptCacheEntry } from "./prompt-cache/host-cache.ts";
import type { DiskEntry, DiskPromptStore } from "./prompt-cache/disk-store.ts";
import { persistIdleSlots, spillEntry } from "./prompt-cache/disk-feed.ts";
import { imageCutAt } from "./image-prompt.ts";
import type { ImageEncoder } from "./image-encoder.ts";
import { BASE_ADAPTER } from "./planning/adapter-turns.ts";
import { isMark, markSpacing, marksUpTo, nextMarkAt } from "./planning/recurrent-marks.ts";

/** Recurrent/hybrid models save a checkpoint only after processing at least this many new prompt tokens. */
export const CHECKPOINT_MIN_NEW_TOKENS = 32;

export type PrefixSource = PrefixChoice<SequenceSlot, PromptCacheEntry | DiskEntry>;

export class SequenceMemory {
  /** Prompt tokens taken from other sequences' cells instead of being processed. */
  copiedTokens = 0;
  private clock = 0;
  /** Disk entries being read into the host cache, and what each read resolves to. */
  private readonly loading = new Map<DiskEntry, Promise<void>>();
  /** Tokens between a recurrent prompt's marks (planning/recurrent-marks.ts). */
  private readonly markSpacing: number;

  constructor(
    readonly slots: readonly SequenceSlot[],
    private readonly context: LlamaContext,
    /** The model's memory can drop positions from the end (attention only). */
    readonly canRollBack: boolean,
    /** All sequences take their cells from one pool (a unified KV cache); else each has a stream of its own. */
    readonly sharedPool: boolean,
    /** The most tokens one sequence may hold: marks are spaced so that a full sequence keeps at most MAX_MARKS. */
    sequenceTokens: number,
    readonly promptCache?: PromptCache,
    disk?: DiskPromptStore,
  ) {
    this.disk = disk;
    this.markSpacing = markSpacing(sequenceTokens);
  }

  /** The disk tier, once it is open (it reads its index after the engine loads); none without a host cache. */
  disk: DiskPromptStore | undefined;
  /** The disk tier's stores of states computed under per-request LoRA adapters, by adapter id. */
  readonly adapterDisks = new Map<number, DiskPromptStore>();

  /** The disk store of an adapter's states (the base model's: `disk`). */
  diskFor(adapter: number): DiskPromptStore | undefined {
    return adapter === BASE_ADAPTER ? this.disk : this.adapterDisks.get(adapter);
  }

  /**
   * The idle slot that keeps the most cached tokens for this prompt (memory of its adapter only); the
   * session's own, then least recently used, on ties.
   */
  pickSlot(prompt: Int32Array, session?: string, adapter = BASE_ADAPTER): SequenceSlot | undefined {
    let best: SequenceSlot | undefined;
    let bestKeep = -1;
    const rank = (slot: SequenceSlot) => (session !== undefined && slot.session === session ? Infinity : -slot.lastUsed);
    for (const slot of this.slots) {
      if (slot.active) continue;
      const keep = slot.adapterId === adapter ? planReuse(slot.cached, prompt, this.canRollBack, slot.checkpoint?.length, slot.markLengths()).keep : 0;
      if (keep > bestKeep || (keep === bestKeep && rank(slot) > rank(best!))) {
        best = slot;
        bestKeep = keep;
      }
    }
    return best;
  }

  /**
   * Where the prompt's leading tokens come from on this slot (see planning/prefix-source.ts). A request that
   * had a disk state read for it is not offered the disk again: what could be read is in the host cache.
   */
  prefixSource(slot: SequenceSlot, active: ActiveRequest): PrefixSource {
    const { prompt, images, adapterId } = active;
    let own: ReusePlan = slot.adapterId === adapterId
      ? planReuse(slot.cached, prompt, this.canRollBack, slot.checkpoint?.length, slot.markLengths()) : { keep: 0, fromCheckpoint: false };
    // An image is kept whole or processed again whole.
    const cut = imageCutAt(images, own.keep);
    if (cut) own = this.canRollBack ? { keep: cut.start, fromCheckpoint: false } : { keep: 0, fromCheckpoint: false };
    if (images.length > 0) return { kind: "own", plan: own };
    // A recurrent state cannot be cut back to a prefix, so only attention-only models copy cells.
    const copies = this.canRollBack
      ? this.slots.filter((other) => other !== slot && other.adapterId === adapterId)
        .map((from) => ({ from, keep: Math.min(commonPrefixLength(from.cached, prompt), prompt.length - 1) }))
      : [];
    const cached = this.promptCache?.find(prompt, adapterId);
    const disk = active.awaitingDisk ? undefined : this.diskFor(adapterId)?.find(prompt);
    return choosePrefixSource<SequenceSlot, PromptCacheEntry | DiskEntry>({
      own, copies, sharedPool: this.sharedPool, hasImages: false,
      ...(cached ? { cache: { match: cached.entry, keep: cached.keep } } : {}),
      // a file being read, or one that failed, is not offered
      ...(disk && !this.loading.has(disk.entry) ? { disk: { match: disk.entry, keep: disk.keep } } : {}),
    });
  }

  /** Whether a disk state this request waits for is still being read. */
  isLoading(entry: DiskEntry): boolean {
    return this.loading.has(entry);
  }

  /**
   * Reads a disk entry (of the adapter's store) into the host cache off the step loop; the request that
   * wanted it finds it there at a later admission. Resolves when done (a file that cannot be used is logged
   * and removed by the tier).
   */
  loadFromDisk(entry: DiskEntry, adapter = BASE_ADAPTER): Promise<void> {
    let pending = this.loading.get(entry);
    if (!pending) {
      pending = this.diskFor(adapter)!.load(entry).then((saved) => {
        if (saved) this.promptCache?.store(saved.tokens, saved.state, { logits: saved.logits, session: saved.session, onDisk: true, adapter, marks: saved.marks });
      }).finally(() => this.loading.delete(entry));
      this.loading.set(entry, pending);
    }
    return pending;
  }

  /** Whether a disk read is in flight. */
  get reading(): boolean {
    return this.loading.size > 0;
  }

  /** Resolves when any disk read in flight ends (immediately when none is). */
  async anyLoad(): Promise<void> {
    if (this.loading.size > 0) await Promise.race(this.loading.values());
  }

  /** Carries out the choice for an admitted prompt (a disk choice is loaded into the host cache first, never here). */
  apply(slot: SequenceSlot, active: ActiveRequest, source: PrefixSource): void {
    const ram = this.promptCache;
    if (source.kind === "own") this.reuseCache(slot, active, source.plan);
    else if (source.kind === "copy") this.copyPrefix(slot, source.from, source.keep);
    else if (source.kind === "cache") this.restoreFromHost(slot, active, source.match as PromptCacheEntry, source.keep);
    ram?.countLookup(source.kind === "cache");
    // the disk tier was looked at when the host cache had nothing worth taking
    if (source.kind !== "cache" && source.kind !== "copy") this.diskFor(active.adapterId)?.countLookup(false);
    slot.lastUsed = ++this.clock;
    slot.session = active.request.schedule?.session;
    slot.adapter = active.adapter;
  }

  /** Counts a prompt served by a state the adapter's disk store gave (it was read into the host cache for it). */
  countDiskHit(adapter = BASE_ADAPTER): void {
    this.diskFor(adapter)?.countLookup(true);
  }

  /**
   * For a recurrent model, whose state cannot be cut back to a shared prefix afterwards: the longest start
   * this prompt shares with what another session sent (agents' common system prompt and tools: in another
   * sequence, a waiting request or a host-cached state), when the prompt goes on past it and the host
   * cache does not hold it yet. The first session's state there is lost, but the second session saves it
   * and every later one restores it. 0: none.
   */
  sharedPrefixEnd(slot: SequenceSlot, active: ActiveRequest, waiting: readonly ActiveRequest[]): number {
    if (this.canRollBack || !this.promptCache || active.images.length > 0) return 0;
    const { prompt, adapterId } = active;
    let shared = this.promptCache.longestSharedPrefix(prompt, adapterId);
    for (const other of this.slots) {
      if (other === slot) continue;
      if (other.adapterId === adapterId) shared = Math.max(shared, commonPrefixLength(other.cached, prompt));
      // a prompt still being processed counts with what it will hold
      if (other.active?.adapterId === adapterId) shared = Math.max(shared, commonPrefixLength(other.active.prompt, prompt));
    }
    for (const request of waiting) if (request !== active && request.adapterId === adapterId) shared = Math.max(shared, commonPrefixLength(request.prompt, prompt));
    const worthSaving = shared >= PROMPT_CACHE_MIN_TOKENS && shared >= active.nextPromptIndex + CHECKPOINT_MIN_NEW_TOKENS
      && shared <= prompt.length - CHECKPOINT_MIN_NEW_TOKENS;
    return worthSaving && !this.promptCache.covers(prompt.subarray(0, shared), adapterId) ? shared : 0;
  }

  /**
   * Where the step processing this prompt must end so that a mark is saved after it (recurrent models, text
   * prompts): the next mark's position, or the prompt's end when none comes before it.
   */
  markCut(active: ActiveRequest): number {
    if (!this.keepsMarks(active)) return active.prompt.length;
    return nextMarkAt(active.nextPromptIndex, active.prompt.length, this.markSpacing) || active.prompt.length;
  }

  /** Recurrent models keep marks along text prompts (an image is kept whole or processed again whole). */
  private keepsMarks(active: ActiveRequest): boolean {
    return !this.canRollBack && active.images.length === 0;
  }

  /**
   * After a decode, the states a recurrent prompt asked to keep: a mark, where it parts from another
   * session's prompt (to the host cache, for the next session), and after its last token (its checkpoint,
   * with the logits, so that the same prompt again needs no decode).
   */
  saveAfterDecode(slot: SequenceSlot): void {
    const active = slot.active!;
    const processed = active.nextPromptIndex;
    if (this.keepsMarks(active) && isMark(processed, active.prompt.length, this.markSpacing)
      && slot.cached.length === processed && (slot.marks.at(-1)?.length ?? 0) < processed) {
      slot.marks.push({ length: processed, state: this.context.saveRecurrentState(slot.seq) });
    }
    if (active.sharedPrefixEnd > 0 && processed === active.sharedPrefixEnd) {
      this.promptCache!.store(slot.cached.slice(0, processed), this.context.saveSequence(slot.seq), { adapter: slot.adapterId, marks: slot.marks });
      active.sharedPrefixEnd = 0;
    }
    if (active.checkpointAfterPrompt && slot.outputIndex >= 0 && active.nextPromptIndex === active.prompt.length) {
      slot.checkpoint = { length: slot.cached.length, state: this.context.saveSequence(slot.seq), logits: this.context.logits(slot.outputIndex) };
      active.checkpointAfterPrompt = false;
    }
  }

  /**
   * Writes idle sequences' memory and host-cached states the disk tier lacks (the engine has nothing else to
   * do): what a session leaves behind survives a restart. Returns the states queued.
   */
  persistIdle(): number {
    if (!this.disk) return 0;
    let queued = persistIdleSlots(this.slots, this.context, (adapter) => this.diskFor(adapter));
    for (const entry of this.promptCache?.notOnDisk() ?? []) if (spillEntry(entry, this.diskFor(entry.adapter))) queued++;
    return queued;
  }

  /** A host-cached state leaves memory: the disk tier writes it when it lacks it. */
  spill(entry: PromptCacheEntry): void {
    spillEntry(entry, this.diskFor(entry.adapter));
  }

  /**
   * Before the slot's memory from `keep` on is dropped: its state goes to the host prompt cache when that
   * loses enough tokens and no other sequence or cached entry holds them. A recurrent model's checkpoint
   * (its state after an earlier prompt, with logits) goes there too when it is about to be lost.
   */
  keepInHost(slot: SequenceSlot, keep: number): void {
    const cache = this.promptCache;
    if (!cache) return;
    const checkpoint = slot.checkpoint;
    const leaving = {
      cachedLength: slot.cached.length, keep, checkpointLength: checkpoint?.length ?? 0,
      covered: cache.covers(slot.cached, slot.adapterId), heldElsewhere: this.heldElsewhere(slot),
    };
    const keepStates = statesToKeep(leaving);
    const extras = { session: slot.session, adapter: slot.adapterId, marks: slot.marks };
    if (keepStates.checkpoint) cache.store(slot.cached.slice(0, checkpoint!.length), checkpoint!.state, { ...extras, logits: checkpoint!.logits });
    if (keepStates.whole) cache.store(slot.cached, this.context.saveSequence(slot.seq), extras);
  }

  /** The slot's memory goes to the host cache (when worth keeping there) and leaves the KV cache. */
  emptySlot(slot: SequenceSlot): void {
    this.keepInHost(slot, 0);
    this.context.clearSequence(slot.seq);
    slot.truncate(0);
  }

  /** Frees a slot's memory without keeping it (a cancelled or failed request). */
  forget(slot: SequenceSlot): void {
    this.context.clearSequence(slot.seq);
    slot.truncate(0);
  }

  /** Cells the running sequences hold, each counted once where running sequences share them. */
  activeCells(): number {
    let cells = 0;
    for (const slot of this.slots) {
      if (!slot.active) continue;
      let shared = 0;
      for (const [other, length] of slot.sharedWith) if (other.active && other.seq < slot.seq) shared = Math.max(shared, length);
      cells += Math.max(0, slot.cached.length - shared);
    }
    return cells;
  }

  /** Cells held now, idle slots' cached prefixes included. */
  usedCells(): number {
    return this.slots.reduce((sum, slot) => sum + slot.distinctCells(), 0);
  }

  /**
   * Frees cells until `needed` are free by dropping idle slots' cached prefixes, least recently used
   * first (never those of `keep`); their states go to the host prompt cache first. Returns the cells free then.
   */
  makeRoom(needed: number, ...keep: SequenceSlot[]): number {
    // a stream of its own holds a sequence's every token: the context limit stops it before the stream is full
    if (!this.sharedPool) return Infinity;
    let free = this.context.contextSize - this.usedCells();
    if (free >= needed) return free;
    const idle = this.slots.filter((slot) => !slot.active && !keep.includes(slot) && slot.cached.length > 0).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const slot of idle) {
      const before = this.usedCells();
      this.emptySlot(slot);
      free += before - this.usedCells();
      if (free >= needed) break;
    }
    return free;
  }

  /** Whether the prompt fits on this slot with this source beside `reserved` cells, once idle caches made way. */
  fits(active: ActiveRequest, slot: SequenceSlot, source: PrefixSource, reserved: number): boolean {
    const needed = this.cellsNeeded(active, slot, source) + reserved;
    const keep = source.kind === "copy" ? [slot, source.from] : [slot];
    return this.makeRoom(needed, ...keep) >= needed;
  }

  /**
   * Cells for a step: each generating sequence's next token (and draft) comes first, after the prompts'
   * `reserved` cells. When they do not fit even with every idle cache dropped, drafts are left out, then
   * the most recently admitted sequences are ended by `end` (their idle memory may then make way too).
   * Returns the cells left for prompt tokens.
   */
  roomForStep(generating: SequenceSlot[], drafts: Map<SequenceSlot, number[]> | undefined, reserved: number, end: (slot: SequenceSlot) => void): number {
    const kept = [...generating];
    const needed = () => kept.reduce((sum, slot) => sum + 1 + (drafts?.get(slot)?.length ?? 0), 0);
    let free = this.makeRoom(needed() + reserved);
    if (free - reserved < needed()) drafts?.clear();
    while (free - reserved < needed() && kept.length > 0) {
      end(kept.pop()!);
      free = this.makeRoom(needed() + reserved);
    }
    return Math.max(0, free - needed());
  }

  /**
   * Runs the slot's pending image through the encoder into its memory. Returns the embedding tokens it
   * took, or the error's message (the slot's memory is then freed).
   */
  evaluateImage(slot: SequenceSlot, images: ImageEncoder): number | string {
    const active = slot.active!;
    const image = active.pendingImage!;
    const started = performance.now();
    try {
      images.evaluate(this.context, image, slot.cached.length, slot.seq);
    } catch (error) {
      this.forget(slot);
      return (error as Error).message;
    }
    for (let i = 0; i < image.positions; i++) slot.cached.push(image.marker);
    active.nextPromptIndex += image.positions;
    active.promptMs += performance.now() - started;
    return image.tokens;
  }

  /** Cells a prompt needs on this slot with this source, before what admitted prompts reserve. */
  cellsNeeded(active: ActiveRequest, slot: SequenceSlot, source: PrefixSource): number {
    const cells = Math.max(active.prompt.length, active.promptTokenCount);
    if (source.kind === "own") {
      const kept = source.plan.fromCheckpoint ? 0 : Math.min(source.plan.keep, slot.cached.length);
      return cells + 1 - kept;
    }
    // copied cells are the source's own, tagged with one more sequence
    if (source.kind === "copy") return cells + 1 - source.keep;
    // restored whole, then cut to the prefix
    return Math.max(cells, source.match.tokens.length) + 1;
  }

  /** Whether another sequence holds every cached token of this slot (as a prefix that can be copied). */
  private heldElsewhere(slot: SequenceSlot): boolean {
    if (!this.canRollBack) return false;
    return this.slots.some((other) => other !== slot && other.adapterId === slot.adapterId && other.cached.length >= slot.cached.length
      && commonPrefixLength(other.cached, slot.cached) === slot.cached.length);
  }

  /**
   * The slot's memory is replaced by `from`'s first `keep` cells: shared with it in a unified KV cache;
   * across streams, copied through host memory. (llama.cpp copies between streams only whole streams and
   * only at the next decode, which a state saved or restored before it would not see.) On failure the
   * slot starts empty.
   */
  private copyPrefix(slot: SequenceSlot, from: SequenceSlot, keep: number): void {
    if (this.sharedPool) {
      this.emptySlot(slot);
      this.context.copySequence(from.seq, slot.seq, 0, keep);
      slot.cached = from.cached.slice(0, keep);
      slot.shareFrom(from, keep);
    } else if (!this.loadState(slot, this.context.saveSequence(from.seq), from.cached, keep)) {
      return;
    }
    this.copiedTokens += keep;
  }

  /** The slot's memory is replaced by a host-cached state, cut to the prompt's prefix; on failure it starts empty. */
  private restoreFromHost(slot: SequenceSlot, active: ActiveRequest, entry: PromptCacheEntry, keep: number): void {
    if (!this.loadState(slot, entry.state, entry.tokens, keep, entry.marks.find((mark) => mark.length === keep))) return;
    this.promptCache!.touch(entry);
    slot.marks = marksUpTo(entry.marks, keep);
    if (entry.logits && keep === entry.tokens.length) {
      // a recurrent checkpoint: it serves this slot's next prompts as its own would
      slot.checkpoint = { length: keep, state: entry.state, logits: entry.logits };
      if (keep === active.prompt.length) active.restoredLogits = entry.logits;
    }
  }

  /**
   * The slot's memory (kept in the host cache first, when worth it) is replaced by `state`, a save of
   * `tokens`, cut back to their first `keep` (on a recurrent model, at `mark`). False, with the slot empty,
   * when llama.cpp refuses any of it.
   */
  private loadState(slot: SequenceSlot, state: Uint8Array, tokens: ArrayLike<number>, keep: number, mark?: RecurrentMark): boolean {
    this.emptySlot(slot);
    // the state needs free cells for all its tokens: idle caches make way when they are missing
    const restored = this.context.restoreSequence(slot.seq, state)
      || (this.makeRoom(tokens.length + 1, slot) > tokens.length && this.context.restoreSequence(slot.seq, state));
    if (!restored || (keep < tokens.length && !this.rollBack(slot, keep, mark))) {
      this.context.clearSequence(slot.seq);
      return false;
    }
    slot.cached = Array.from({ length: keep }, (_, i) => tokens[i]!);
    return true;
  }

  /**
   * Drops the sequence's cells from `keep` on: on a recurrent model only at a mark, whose recurrent state
   * is restored first (the attention cells before it stay). False when llama.cpp refuses.
   */
  private rollBack(slot: SequenceSlot, keep: number, mark?: RecurrentMark): boolean {
    if (!this.canRollBack && (mark?.length !== keep || !this.context.restoreRecurrentState(slot.seq, mark.state))) return false;
    return this.context.removeTokens(slot.seq, keep, -1);
  }

  /** Keeps what the prompt can reuse of the slot's memory (live cache, checkpoint or mark) and drops the rest. */
  private reuseCache(slot: SequenceSlot, active: ActiveRequest, plan: ReusePlan): void {
    const { prompt } = active;
    if (plan.keep < slot.cached.length) this.keepInHost(slot, plan.keep);
    if (plan.fromCheckpoint) {
      this.context.clearSequence(slot.seq);
      if (this.context.restoreSequence(slot.seq, slot.checkpoint!.state)) {
        // The whole prompt is the checkpoint's: its first token comes from the saved logits.
        if (plan.keep === prompt.length) active.restoredLogits = slot.checkpoint!.logits;
        slot.truncate(plan.keep);
        return;
      }
      slot.truncate(0);
      return;
    }
    if (plan.keep >= slot.cached.length) return;
    const mark = plan.fromMark ? slot.marks.find((m) => m.length === plan.keep) : undefined;
    if (plan.keep === 0 || !this.rollBack(slot, plan.keep, mark)) this.forget(slot);
    else slot.truncate(plan.keep);
  }
}
