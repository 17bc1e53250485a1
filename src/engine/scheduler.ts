// Continuous batching over one context: every step puts one token for each generating sequence into
// the batch, fills the rest of the step's token budget with waiting prompt tokens (long prompts span
// several steps), decodes once, and samples every sequence that produced logits with its own chain.
//
// The decisions are planners over plain facts (./planning/): who gets a free sequence (admission.ts:
// fair turns between keys, then least uncached prompt work, bounded so that nothing starves), which cold
// prompt gives its busy sequence to a warm turn (preemption.ts: its work waits in the host cache), where a
// prompt's prefix comes from (prefix-source.ts: its own memory, another sequence, host memory, disk), how
// many prompt tokens a step may take beside generating sequences and whose (step-budget.ts: a latency
// bound from measured step costs), where a hybrid model's prompt saves marks of its recurrent state
// (recurrent-marks.ts), what the caches keep (cache-tiers.ts) and how far to draft
// (speculation-cost.ts, draft-pace.ts). This class runs the steps and carries the plans out: admission
// is admission-runner.ts, the sequences' memory sequence-memory.ts, filling a step's batch with prompt
// tokens prompt-feed.ts, sampling token-output.ts.
//
// Images: a prompt's image goes through the vision encoder and is decoded into its sequence in a step
// of its own, at most one image per step, before that step's token batch; the other sequences keep
// decoding in every step, so an image delays them by one encode at most.
// LoRA adapters per request: llama.cpp applies one to the whole context, so adapters take turns (adapter-schedule.ts).
import { DecodeStatus, LlamaContext, TokenBatch, amxKernelsLoaded, type LlamaModel } from "../../ffi/llama.ts";
import { ActiveRequest, SequenceSlot, type EventSink } from "./sequence.ts";
import type { ThreadGovernor } from "./thread-governor.ts";
import type { PromptCache, PromptCacheEntry } from "./prompt-cache/host-cache.ts";
import type { DiskPromptStore } from "./prompt-cache/disk-store.ts";
import { EngineError, type EngineStats, type GenerateRequest } from "./types.ts";
import type { ImageEncoder } from "./image-encoder.ts";
import type { Speculation } from "./speculative/speculation.ts";
import { AdmissionRunner, reservedForPrompts } from "./admission-runner.ts";
import { holdsFirstTokens, promptFlushFor, promptTokenBudget, StepCosts, type PromptsInProgress } from "./planning/step-budget.ts";
import { feedPrompts } from "./prompt-feed.ts";
import { SequenceMemory } from "./sequence-memory.ts";
import { TokenOutput } from "./token-output.ts";
import { StepTrace } from "./step-trace.ts";
import { intakeRequest } from "./request-intake.ts";
import type { KvCacheNotifications } from "./kv-events/kv-cache-events.ts";
import { AdapterSchedule } from "./adapter-schedule.ts";
import type { LoraAdapters } from "./lora-adapters.ts";

export const DEFAULT_QUEUE_LIMIT = 512;

export interface SchedulerOptions {
  queueLimit?: number;
  /** The vision encoder, when the model was loaded with a projector. */
  images?: ImageEncoder;
  /** Speculative decoding (draft model or n-gram), when the engine was loaded with it. */
  speculation?: Speculation;
  /** A step that finishes a prompt and holds at least this many tokens takes no further prompt tokens (default: never ends early). */
  promptFlushTokens?: number;
  /**
   * Most tokens one sequence may hold. Default: the context's own share per sequence. With a unified KV
   * cache the sequences share the context's cells, which may be fewer than this × sequences.
   */
  contextPerSequence?: number;
  /** Told the time and size of each decode step, to pick the thread count (when the user did not). */
  threadGovernor?: ThreadGovernor;
  /** Host memory for the states of sequences given to other requests (--cache-ram); none: such memory is lost. */
  promptCache?: PromptCache;
  /** The disk tier (--cache-disk), beside the host cache. */
  diskCache?: DiskPromptStore;
  /** LoRA adapters requests may name (--enable-lora); none: the base model only. */
  adapters?: LoraAdapters;
}

export class Scheduler {
  private readonly threadGovernor: ThreadGovernor | undefined;
  private readonly slots: SequenceSlot[];
  private readonly queue: ActiveRequest[] = [];
  private readonly byId = new Map<string, ActiveRequest>();
  /** Requests admitted to a slot, in admission order (the order prompts are processed). */
  private readonly admitted: SequenceSlot[] = [];
  private readonly batch: TokenBatch;
  /** False when sequences must not share a llama_decode call (see step()). */
  private readonly coBatch: boolean;
  private readonly queueLimit: number;
  private readonly images?: ImageEncoder;
  private readonly speculation?: Speculation;
  private readonly promptFlushTokens: number;
  private readonly memory: SequenceMemory;
  private readonly output: TokenOutput;
  private readonly stepCosts = new StepCosts();
  private readonly stepTrace = StepTrace.fromEnvironment();
  /** Most tokens one sequence may hold. */
  private readonly limit: number;
  private decodeSteps = 0;
  private decodedTokens = 0;
  /** Gives free sequences to waiting requests (and busy ones to warm turns). */
  private readonly admission: AdmissionRunner;
  private kvEvents: KvCacheNotifications | undefined;
  /** Where decode steps spent their time, in ms since the engine started (EngineStats.stepMs). */
  private readonly stepTimes = { decode: 0, sample: 0, total: 0 };
  /** LoRA adapters per request, their turns and disk stores (the engine loads and unloads through it). */
  readonly adapters?: AdapterSchedule;

  constructor(private readonly model: LlamaModel, private readonly context: LlamaContext, options: SchedulerOptions = {}) {
    this.queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT;
    this.images = options.images;
    this.speculation = options.speculation;
    this.promptFlushTokens = options.promptFlushTokens ?? Infinity;
    this.limit = Math.min(options.contextPerSequence ?? context.contextPerSequence, context.contextPerSequence);
    this.threadGovernor = options.threadGovernor;
    this.slots = Array.from({ length: context.sequences }, (_, seq) => new SequenceSlot(seq));
    this.batch = new TokenBatch(context.batchSize);
    this.memory = new SequenceMemory(this.slots, context, !model.isRecurrentOrHybrid, context.unifiedKv, this.limit, options.promptCache, options.diskCache);
    this.coBatch = !(model.isRecurrentOrHybrid && amxKernelsLoaded());
    if (options.adapters) this.adapters = new AdapterSchedule(options.adapters, this.memory, this.queue, this.admitted);
    this.admission = new AdmissionRunner(this.queue, this.admitted, this.memory, { adapters: this.adapters, speculating: options.speculation !== undefined });
    this.output = new TokenOutput(model, context, this.limit, {
      release: (slot, reason, stop, stopToken) => this.release(slot, reason, stop, stopToken),
      fail: (slot, code, message) => {
        this.endSlot(slot).fail(code, message);
        return false;
      },
    }, options.speculation);
  }

  get hasWork(): boolean {
    return this.queue.length > 0 || this.admitted.length > 0;
  }

  stats(): EngineStats {
    const { promptCache, disk } = this.memory;
    return {
      running: this.admitted.length,
      waiting: this.queue.length,
      usedTokens: this.memory.usedCells(),
      activeTokens: this.memory.activeCells(),
      capacityTokens: this.context.contextSize,
      decodeSteps: this.decodeSteps,
      decodedTokens: this.decodedTokens,
      imageEncodes: this.images?.encodes ?? 0,
      draftTokens: this.speculation?.draftedTokens ?? 0,
      acceptedDraftTokens: this.speculation?.acceptedTokens ?? 0,
      ...(this.speculation ? { draftStepYield: this.speculation.yieldRatios } : {}),
      copiedPrefixTokens: this.memory.copiedTokens,
      preemptions: this.admission.preemptions,
      stepMs: { ...this.stepTimes },
      ...(promptCache ? { promptCache: promptCache.stats() } : {}),
      ...(disk ? { diskCache: disk.stats() } : {}),
      ...(this.adapters ? { loraAdapters: this.adapters.stats() } : {}),
    };
  }

  /** Tokenizes and queues a request; throws EngineError for requests that cannot run. */
  submit(request: GenerateRequest, emit: EventSink): void {
    if (this.byId.has(request.id)) throw new EngineError("invalid_request", `Cannot submit request "${request.id}": id already in use`);
    // queued requests a free sequence takes at the next step are not waiting for one (an idle engine
    // gathers a burst before its first step: planning/arrival-window.ts)
    const waiting = Math.max(0, this.queue.length - (this.slots.length - this.admitted.length));
    if (waiting >= this.queueLimit) {
      throw new EngineError("busy", `Cannot accept request: ${waiting} requests are already waiting (limit ${this.queueLimit})`);
    }
    const active = intakeRequest({ model: this.model, images: this.images, output: this.output, limit: this.limit, adapters: this.adapters?.adapters }, request, emit);
    const session = request.schedule?.session;
    if (session !== undefined) this.memory.promptCache?.touchSession(session);
    this.byId.set(request.id, active);
    this.queue.push(active);
  }

  /** Marks a request cancelled; it leaves the batch, and its sequence is freed, at the next step. */
  cancel(id: string): void {
    const active = this.byId.get(id);
    if (active) active.cancelled = true;
  }

  /** Ends every request with an error (shutdown); host-cached states go to the disk tier. */
  failAll(message: string): void {
    for (const active of this.byId.values()) active.fail("engine_exited", message);
    this.byId.clear();
    this.queue.length = 0;
    for (const slot of this.admitted) slot.active = undefined;
    this.admitted.length = 0;
    this.memory.promptCache?.clear(true);
    this.kvEvents?.allCleared();
    this.kvEvents?.flush();
  }

  /** With nothing to do: idle sequences' memory and host-cached states go to the disk tier. */
  persistIdle(): number {
    return this.hasWork ? 0 : this.memory.persistIdle();
  }

  /** The disk tier, once open. */
  attachDisk(store: DiskPromptStore): void {
    this.memory.disk = store;
  }

  /** KV-cache events: after every step, each sequence's memory is reported (the events diff it by blocks). */
  attachKvEvents(events: KvCacheNotifications): void {
    this.kvEvents = events;
  }

  /** A host-cached state leaves memory: the disk tier keeps it. */
  spill(entry: PromptCacheEntry): void {
    this.memory.spill(entry);
  }

  /** Whether a disk read that a waiting request needs is in flight. */
  get readingDisk(): boolean {
    return this.memory.reading;
  }

  /** Resolves when a disk read that a waiting request needs ends (the step loop waits on it when nothing else can run). */
  waitForDisk(): Promise<void> {
    return this.memory.anyLoad();
  }

  /** One decode step. Returns false when there was nothing to do. */
  step(): boolean {
    this.dropCancelled();
    this.admission.admitWaiting();
    if (this.admitted.length === 0) return false;
    this.sampleRestoredPrompts();
    if (this.admitted.length === 0) return true;
    // the sequences of the adapter whose turn it is, with its adapter set applied (all of them without adapters)
    const stepping = this.adapters?.slotsForStep(this.slots) ?? this.slots;
    this.evaluateNextImage(stepping);
    // ggml's Intel AMX kernels (loaded only with LLAMUX_CPU_AMX=1) compute wrong results for hybrid
    // models when one micro-batch holds several sequences (ffi/cpu-backends.ts): those then decode one
    // sequence per llama_decode call, still interleaved step by step.
    const groups = this.coBatch ? [stepping] : stepping.map((slot) => [slot]);
    for (const group of groups) {
      if (!this.decodeGroup(new Set(group))) break;
    }
    this.adapters?.freeUnused();
    this.reportCachedBlocks();
    return true;
  }

  /** Each sequence's memory as it stands after the step, as one batch of KV-cache events. */
  private reportCachedBlocks(): void {
    const events = this.kvEvents;
    if (!events) return;
    for (const slot of this.slots) events.sequenceCached(slot.seq, slot.cached, slot.adapter);
    events.flush();
  }

  /** Requests whose whole prompt came back from a checkpoint take their first token from its logits. */
  private sampleRestoredPrompts(): void {
    for (const slot of [...this.admitted]) {
      const logits = slot.active!.restoredLogits;
      if (!logits) continue;
      slot.active!.restoredLogits = undefined;
      this.output.sample(slot, logits);
    }
  }

  /** The first waiting image (in admission order) of the stepping slots goes through the encoder into its sequence: one a step. */
  private evaluateNextImage(stepping: readonly SequenceSlot[]): void {
    const slot = this.admitted.find((s) => s.active!.pendingImage !== undefined && stepping.includes(s));
    if (!slot || !this.images) return;
    const evaluated = this.memory.evaluateImage(slot, this.images);
    if (typeof evaluated === "string") {
      this.endSlot(slot).fail("engine_failure", evaluated);
      return;
    }
    this.decodeSteps++;
    this.decodedTokens += evaluated;
  }

  /** Decodes the pending work of the given slots in one llama_decode call and samples their next tokens. False when the decode failed. */
  private decodeGroup(group: Set<SequenceSlot>): boolean {
    const started = performance.now();
    this.batch.clear();
    const prompts = this.admitted.filter((slot) => group.has(slot) && slot.active!.prefilling && !slot.active!.pendingImage);
    const inProgress = promptsInProgress(prompts);
    // a burst's first finished prompts wait one step for the rest (planning/step-budget.ts)
    const generating = [...group].filter((slot) => slot.active && !slot.active.prefilling).map(({ active }) => ({ generated: active!.generated, held: active!.heldForPrompts, startedAt: active!.startedAt }));
    const holding = holdsFirstTokens(generating, inProgress, this.batch.capacity);
    const drafts = holding ? undefined : this.speculation?.planFor(group, this.batch.capacity, this.limit);
    const cells = this.roomForStep(group, drafts);
    // Decode tokens go in sequence-id order: llama.cpp splits a batch whose sequences are out of order
    // into several micro-batches (measured on LFM2: 4
    // sequences took 30 ms per step in admission order 1,2,3,0 and 22.5 ms in order 0,1,2,3).
    for (const slot of group) {
      const active = slot.active;
      slot.outputIndex = -1;
      slot.draft = undefined;
      if (active && !active.prefilling) {
        if (holding) {
          active.heldForPrompts = true;
          continue;
        }
        active.releaseTokens();
        slot.outputIndex = this.batch.add(active.pendingToken, slot.cached.length, slot.seq, true);
        slot.cached.push(active.pendingToken);
        slot.draft = drafts?.get(slot);
        if (slot.draft) this.addDraft(slot, slot.draft);
      }
    }
    const decodeRows = this.batch.count;
    const budget = Math.min(cells, promptTokenBudget(this.stepCosts, decodeRows, this.batch.free, group.size));
    const flushTokens = promptFlushFor(decodeRows, inProgress.tokensLeft, this.batch.capacity, this.promptFlushTokens);
    const { prefillingThisStep, progressing } = feedPrompts(this.batch, prompts, this.memory, budget, flushTokens);
    if (this.batch.count === 0) return true;

    const decodeStarted = performance.now();
    let status = this.context.decode(this.batch);
    // the cells may lie scattered: with every idle cache dropped, a second try finds room
    if (status === DecodeStatus.noSpace && this.memory.sharedPool && this.memory.makeRoom(Infinity) > 0) status = this.context.decode(this.batch);
    const decodeMs = performance.now() - decodeStarted;
    this.threadGovernor?.record(decodeMs, this.batch.count);
    // the cost of a row, from steps of generating sequences only (prompt rows cost less: no logits)
    if (prefillingThisStep.length === 0) this.speculation?.recordStep(this.batch.count, decodeMs);
    this.decodeSteps++;
    this.decodedTokens += this.batch.count;
    if (status !== DecodeStatus.ok) {
      this.failBatch(`llama_decode failed with status ${status}`);
      return false;
    }
    const inGroup = this.admitted.filter((slot) => group.has(slot));
    for (const slot of inGroup) this.memory.saveAfterDecode(slot);
    const elapsed = performance.now() - started;
    for (const active of prefillingThisStep) active.promptMs += elapsed;
    for (const active of progressing) active.reportProgress();
    // what a step of generating sequences produced, drafting and verification included: whether drafting pays in fact
    const yieldMeasured = prefillingThisStep.length === 0 ? this.speculation?.measureYield(inGroup) : undefined;
    // prompts that end now ahead of the rest of their burst keep their first token until the step they
    // will sit out ends, when the burst's last prompts send theirs (planning/step-budget.ts)
    if (!holding && decodeRows === 0) this.holdFirstTokensOfBurst(prompts);
    const sampleStarted = performance.now();
    for (const slot of inGroup) {
      if (slot.draft) this.output.verifyDraft(slot, slot.draft);
      else if (slot.outputIndex >= 0) this.output.sample(slot);
    }
    if (holding) for (const slot of inGroup) slot.active?.releaseTokens();
    const ended = performance.now();
    // the whole step, sampling included, is what generating sequences wait for
    this.stepCosts.record(decodeRows, this.batch.count - decodeRows, ended - started);
    this.stepTrace?.record({ decodeRows, promptTokens: this.batch.count - decodeRows, stepMs: ended - started, decodeMs, waiting: this.queue.length });
    this.stepTimes.decode += decodeMs;
    this.stepTimes.sample += ended - sampleStarted;
    this.stepTimes.total += ended - started;
    yieldMeasured?.(performance.now() - started);
    return true;
  }

  /** Whether the next step will hold the prompts that ended in this one (`prompts`: this step's): if so, their tokens wait. */
  private holdFirstTokensOfBurst(prompts: readonly SequenceSlot[]): void {
    const ended = prompts.filter((slot) => slot.active && !slot.active.prefilling && slot.outputIndex >= 0);
    const going = prompts.filter((slot) => slot.active?.prefilling);
    if (ended.length === 0 || going.length === 0) return;
    const views = ended.map(({ active }) => ({ generated: 1, held: false, startedAt: active!.startedAt }));
    if (holdsFirstTokens(views, promptsInProgress(going), this.batch.capacity)) for (const slot of ended) slot.active!.holdTokens();
  }

  private dropCancelled(): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const active = this.queue[i]!;
      if (!active.cancelled) continue;
      this.queue.splice(i, 1);
      this.byId.delete(active.id);
      active.finish("cancelled");
    }
    for (const slot of [...this.admitted]) {
      if (!slot.active!.cancelled) continue;
      // A cancelled request's memory is freed, not kept for reuse: the caller abandoned it mid-way.
      this.memory.forget(slot);
      this.release(slot, "cancelled");
    }
  }

  /** Ends the slot's request; returns false, so that sampling can `return this.release(…)`. */
  private release(slot: SequenceSlot, reason: "stop" | "length" | "cancelled", stop?: string, stopToken?: number): false {
    this.endSlot(slot).finish(reason, stop, stopToken);
    return false;
  }

  /** Takes the slot's request out of the batch (its cached tokens stay for reuse) and returns it. */
  private endSlot(slot: SequenceSlot): ActiveRequest {
    const active = slot.active!;
    slot.active = undefined;
    slot.outputIndex = -1;
    this.admitted.splice(this.admitted.indexOf(slot), 1);
    this.byId.delete(active.id);
    return active;
  }

  private failBatch(message: string): void {
    for (const slot of [...this.admitted]) {
      const active = slot.active!;
      this.memory.forget(slot);
      slot.active = undefined;
      this.byId.delete(active.id);
      active.fail("engine_failure", message);
    }
    this.admitted.length = 0;
  }

  // ---- cells: with a unified KV cache, all sequences take their cells from one pool ----

  /**
   * Cells for this step after the generating sequences' tokens (sequence-memory.ts roomForStep); a
   * sequence that cannot have a cell even so ends as at a full context ("length").
   */
  private roomForStep(group: Set<SequenceSlot>, drafts: Map<SequenceSlot, number[]> | undefined): number {
    const generating = this.admitted.filter((slot) => group.has(slot) && !slot.active!.prefilling && !slot.active!.pendingImage);
    return this.memory.roomForStep(generating, drafts, reservedForPrompts(this.admitted), (slot) => this.release(slot, "length"));
  }

  // ---- speculative decoding hooks (the work itself is in ./speculative/) ----

  /** Puts a draft after the slot's next token, every row with logits to verify it from. */
  private addDraft(slot: SequenceSlot, draft: number[]): void {
    for (const token of draft) {
      this.batch.add(token, slot.cached.length, slot.seq, true);
      slot.cached.push(token);
    }
    slot.active!.draftTokens! += draft.length;
  }
}

/** What the burst rule weighs of the prompts being processed in `slots`: their tokens left and earliest admission. */
function promptsInProgress(slots: readonly SequenceSlot[]): PromptsInProgress {
  return {
    tokensLeft: slots.reduce((sum, slot) => sum + slot.active!.prompt.length - slot.active!.nextPromptIndex, 0),
    earliestStart: Math.min(...slots.map((slot) => slot.active!.startedAt)),
  };
}
