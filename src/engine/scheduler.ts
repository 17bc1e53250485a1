// Continuous batching over one context: every step puts one token for each generating sequence into
// the batch, fills the rest of the token budget with waiting prompt tokens (long prompts span several
// steps), decodes once, and samples every sequence that produced logits with its own sampler chain.
//
// Strategy "decode first, least prompt work first": generating sequences never stall behind a long
// prompt. A free sequence goes to the waiting request with the fewest tokens left to process once its
// reusable prefix is counted (an agent's next turn, mostly cached, before a cold prompt), and admitted
// prompts take a step's room shortest first; both are bounded so that nothing starves (a waiting request
// is overtaken at most MAX_OVERTAKEN times; a prompt passed over in a step gains a step's worth of
// tokens of priority). On the CPU a step ends where a prompt ends once
// it holds `promptFlushTokens` tokens: a burst of prompts then gets its first tokens one prompt after
// another instead of four at a time at the end of a 512-token step (the CPU processes 64-token batches
// as fast as 512-token ones, so the extra steps cost nothing; a GPU wants its batches full). A step in
// which a short prompt ends takes no more than `promptFlushTokens` tokens of the prompts after it, so a
// short request that arrives during a long prefill gets its first token after a small step, not a
// 512-token step of the long prompt at its depth.
//
// Images: a prompt's image goes through the vision encoder and is decoded into its sequence in a step
// of its own, at most one image per step, before that step's token batch; the other sequences keep
// decoding in every step, so an image delays them by one encode at most.
import { DecodeStatus, LlamaContext, TokenBatch, SamplerChain, amxKernelsLoaded, defaultSamplerSettings, type LlamaModel } from "../../ffi/llama.ts";
import { InvalidGrammarError, NO_TOKEN } from "../../ffi/sampler.ts";
import { ActiveRequest, SequenceSlot, type EventSink } from "./sequence.ts";
import type { ThreadGovernor } from "./thread-governor.ts";
import { commonPrefixLength, planReuse, type ReusePlan } from "./prefix-reuse.ts";
import type { PromptCache, PromptCacheMatch } from "./prompt-cache.ts";
import { EngineError, type EngineStats, type GenerateRequest, type TokenLogprobs } from "./types.ts";
import { computeLogprobs } from "./logprobs.ts";
import { checkRequestTokenIds } from "./token-ids.ts";
import { checkGrammarBounds } from "../chat/structured/grammar-bounds.ts";
import { StructuredOutputError } from "../chat/structured/errors.ts";
import type { ImageEncoder } from "./image-encoder.ts";
import { disposeImages, imageCutAt, tokenizeWithImages, type ImageSpan } from "./image-prompt.ts";
import type { Speculation } from "./speculative/speculation.ts";

export const DEFAULT_QUEUE_LIMIT = 512;
/** Recurrent/hybrid models save a checkpoint only after processing at least this many new prompt tokens. */
export const CHECKPOINT_MIN_NEW_TOKENS = 32;
/** Waiting requests weighed at each admission: the oldest this many (each costs a prefix comparison per sequence). */
export const ADMISSION_WINDOW = 8;
/** A waiting request that later ones with less work overtook this many times is admitted next. */
export const MAX_OVERTAKEN = 4;
/** On the CPU, a step that finishes a prompt ends there once it holds this many tokens. */
export const CPU_PROMPT_FLUSH_TOKENS = 64;
/**
 * A sequence's memory goes to the host prompt cache before it is dropped only when it would lose at least
 * this many tokens: fewer are processed again faster than a state is copied out and back.
 */
export const PROMPT_CACHE_MIN_TOKENS = 64;

/**
 * Where an admitted prompt's leading tokens come from: the slot's own memory, another sequence's cells
 * (copied inside the KV cache, attention-only models), or the host prompt cache.
 */
type PrefixSource =
  | { kind: "own"; plan: ReusePlan }
  | { kind: "copy"; from: SequenceSlot; keep: number }
  | { kind: "cache"; match: PromptCacheMatch };

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
}

export class Scheduler {
  private readonly threadGovernor: ThreadGovernor | undefined;
  private readonly slots: SequenceSlot[];
  private readonly queue: ActiveRequest[] = [];
  private readonly byId = new Map<string, ActiveRequest>();
  /** Requests admitted to a slot, in admission order (the order prompts are processed). */
  private readonly admitted: SequenceSlot[] = [];
  private readonly batch: TokenBatch;
  private readonly canRollBack: boolean;
  /** All sequences take their cells from one pool (a unified KV cache); else each has a stream of its own. */
  private readonly sharedPool: boolean;
  /** False when sequences must not share a llama_decode call (see step()). */
  private readonly coBatch: boolean;
  private readonly queueLimit: number;
  private readonly images?: ImageEncoder;
  private readonly speculation?: Speculation;
  private readonly promptFlushTokens: number;
  private readonly promptCache?: PromptCache;
  /** Prompt tokens taken from other sequences' cells (llama_memory_seq_cp) instead of being processed. */
  private copiedTokens = 0;
  /** Most tokens one sequence may hold. */
  private readonly limit: number;
  private clock = 0;
  private decodeSteps = 0;
  private decodedTokens = 0;

  constructor(private readonly model: LlamaModel, private readonly context: LlamaContext, options: SchedulerOptions = {}) {
    this.queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT;
    this.images = options.images;
    this.speculation = options.speculation;
    this.promptFlushTokens = options.promptFlushTokens ?? Infinity;
    this.promptCache = options.promptCache;
    this.limit = Math.min(options.contextPerSequence ?? context.contextPerSequence, context.contextPerSequence);
    this.threadGovernor = options.threadGovernor;
    this.slots = Array.from({ length: context.sequences }, (_, seq) => new SequenceSlot(seq));
    this.batch = new TokenBatch(context.batchSize);
    this.canRollBack = !model.isRecurrentOrHybrid;
    this.sharedPool = context.unifiedKv;
    this.coBatch = !(model.isRecurrentOrHybrid && amxKernelsLoaded());
  }

  get hasWork(): boolean {
    return this.queue.length > 0 || this.admitted.length > 0;
  }

  get running(): number {
    return this.admitted.length;
  }

  get waiting(): number {
    return this.queue.length;
  }

  stats(): EngineStats {
    return {
      running: this.admitted.length,
      waiting: this.queue.length,
      usedTokens: this.usedCells(),
      capacityTokens: this.context.contextSize,
      decodeSteps: this.decodeSteps,
      decodedTokens: this.decodedTokens,
      imageEncodes: this.images?.encodes ?? 0,
      draftTokens: this.speculation?.draftedTokens ?? 0,
      acceptedDraftTokens: this.speculation?.acceptedTokens ?? 0,
      ...(this.speculation ? { draftStepYield: this.speculation.yieldRatios } : {}),
      copiedPrefixTokens: this.copiedTokens,
      ...(this.promptCache ? { promptCache: this.promptCache.stats() } : {}),
    };
  }

  /** Tokenizes and queues a request; throws EngineError for requests that cannot run. */
  submit(request: GenerateRequest, emit: EventSink): void {
    if (this.byId.has(request.id)) throw new EngineError("invalid_request", `Cannot submit request "${request.id}": id already in use`);
    if (this.queue.length >= this.queueLimit) {
      throw new EngineError("busy", `Cannot accept request: ${this.queue.length} requests are already waiting (limit ${this.queueLimit})`);
    }
    // Checked here as well as in the client: one request's bad id must not fail the whole batch.
    checkRequestTokenIds(request, this.model.vocab.size);
    const { tokens: prompt, images } = this.tokenizePrompt(request);
    const active = new ActiveRequest(request, prompt, emit, images);
    try {
      if (prompt.length === 0) throw new EngineError("invalid_request", "Cannot generate from an empty prompt");
      if (request.forcedTokens?.length === 0) throw new EngineError("invalid_request", "Cannot score an empty list of forced tokens");
      const cells = Math.max(prompt.length, active.promptTokenCount);
      if (cells >= this.limit) {
        throw new EngineError("context_overflow",
          `Prompt of ${cells} tokens does not fit the context of ${this.limit} tokens per sequence`);
      }
      const forced = request.forcedTokens?.length ?? 0;
      if (cells + forced > this.limit) {
        throw new EngineError("context_overflow",
          `Prompt of ${cells} tokens and ${forced} tokens to score do not fit the context of ${this.limit} tokens per sequence`);
      }
      active.sampler = this.createSampler(request, (request.minTokens ?? 0) > 0);
    } catch (error) {
      disposeImages(images);
      if (error instanceof InvalidGrammarError || error instanceof StructuredOutputError) throw new EngineError("invalid_request", error.message);
      throw error;
    }
    this.byId.set(request.id, active);
    this.queue.push(active);
  }

  /** Marks a request cancelled; it leaves the batch, and its sequence is freed, at the next step. */
  cancel(id: string): void {
    const active = this.byId.get(id);
    if (active) active.cancelled = true;
  }

  /** The request's prompt as tokens, with its images decoded and placed at their media markers. */
  private tokenizePrompt(request: GenerateRequest): { tokens: Int32Array; images: ImageSpan[] } {
    const options = { addSpecial: request.addSpecial ?? true, parseSpecial: request.parseSpecial ?? true };
    if (!request.images?.length) {
      const tokens = typeof request.prompt === "string" ? this.model.vocab.tokenize(request.prompt, options) : Int32Array.from(request.prompt);
      return { tokens, images: [] };
    }
    if (!this.images) throw new EngineError("invalid_request", `Model "${this.model.path}" has no vision support: no projector is loaded, so it cannot take images`);
    if (typeof request.prompt !== "string") throw new EngineError("invalid_request", "Cannot place images in a prompt of token ids: send text with media markers");
    return tokenizeWithImages(this.images.projector, request.prompt, request.images, options);
  }

  /** Ends every request with an error (shutdown). */
  failAll(message: string): void {
    for (const active of this.byId.values()) active.fail("engine_exited", message);
    this.byId.clear();
    this.queue.length = 0;
    for (const slot of this.admitted) slot.active = undefined;
    this.admitted.length = 0;
    this.promptCache?.clear();
  }

  /** One decode step. Returns false when there was nothing to do. */
  step(): boolean {
    this.dropCancelled();
    this.admitWaiting();
    if (this.admitted.length === 0) return false;
    this.sampleRestoredPrompts();
    if (this.admitted.length === 0) return true;
    this.evaluateNextImage();
    // ggml's Intel AMX kernels (loaded only with LLAMUX_CPU_AMX=1) compute wrong results for hybrid
    // models when one micro-batch holds several sequences (ffi/cpu-backends.ts): those then decode one
    // sequence per llama_decode call, still interleaved step by step.
    const groups = this.coBatch ? [this.slots] : this.slots.map((slot) => [slot]);
    for (const group of groups) {
      if (!this.decodeGroup(new Set(group))) break;
    }
    return true;
  }

  /** Requests whose whole prompt came back from a checkpoint take their first token from its logits. */
  private sampleRestoredPrompts(): void {
    for (const slot of [...this.admitted]) {
      const logits = slot.active!.restoredLogits;
      if (!logits) continue;
      slot.active!.restoredLogits = undefined;
      this.sampleSlot(slot, logits);
    }
  }

  /**
   * Runs the first waiting image (in admission order) through the encoder and into its sequence: one
   * image per step, so the sequences that decode tokens wait at most one encode between their steps.
   */
  private evaluateNextImage(): void {
    if (!this.images) return;
    const slot = this.admitted.find((s) => s.active!.pendingImage !== undefined);
    if (!slot) return;
    const active = slot.active!;
    const image = active.pendingImage!;
    const started = performance.now();
    try {
      this.images.evaluate(this.context, image, slot.cached.length, slot.seq);
    } catch (error) {
      this.context.clearSequence(slot.seq);
      slot.truncate(0);
      this.endSlot(slot).fail("engine_failure", (error as Error).message);
      return;
    }
    for (let i = 0; i < image.positions; i++) slot.cached.push(image.marker);
    active.nextPromptIndex += image.positions;
    active.promptMs += performance.now() - started;
    this.decodeSteps++;
    this.decodedTokens += image.tokens;
  }

  /** Decodes the pending work of the given slots in one llama_decode call and samples their next tokens. False when the decode failed. */
  private decodeGroup(group: Set<SequenceSlot>): boolean {
    const started = performance.now();
    this.batch.clear();
    const prefillingThisStep: ActiveRequest[] = [];
    /** Requests that put prompt tokens into this step's batch. */
    const progressing: ActiveRequest[] = [];
    const drafts = this.planDrafts(group);
    let room = this.roomForStep(group, drafts);
    // Decode tokens go in sequence-id order: llama.cpp splits a batch whose sequences are out of order
    // into several micro-batches (measured on LFM2: 4
    // sequences took 30 ms per step in admission order 1,2,3,0 and 22.5 ms in order 0,1,2,3).
    for (const slot of group) {
      const active = slot.active;
      slot.outputIndex = -1;
      slot.draft = undefined;
      if (active && !active.prefilling) {
        slot.outputIndex = this.batch.add(active.pendingToken, slot.cached.length, slot.seq, true);
        slot.cached.push(active.pendingToken);
        slot.draft = drafts?.get(slot);
        if (slot.draft) this.addDraft(slot, slot.draft);
      }
    }
    /** A prompt ends in this step: the prompts after it fill the step only up to promptFlushTokens, so its first token comes soon. */
    let promptEnded = false;
    for (const slot of this.prefillOrder()) {
      const active = slot.active!;
      if (!group.has(slot) || !active.prefilling || this.batch.free === 0 || active.pendingImage) continue;
      prefillingThisStep.push(active);
      // Text up to the next image: the image waits for an image step of its own.
      let end = Math.min(active.textEnd(), active.nextPromptIndex + this.batch.free, active.nextPromptIndex + room);
      if (active.sharedPrefixEnd > active.nextPromptIndex) end = Math.min(end, active.sharedPrefixEnd);
      if (promptEnded) end = Math.min(end, active.nextPromptIndex + Math.max(0, this.promptFlushTokens - this.batch.count));
      if (end <= active.nextPromptIndex) continue;
      progressing.push(active);
      room -= end - active.nextPromptIndex;
      for (let i = active.nextPromptIndex; i < end; i++) {
        const last = i === active.prompt.length - 1;
        const index = this.batch.add(active.prompt[i]!, slot.cached.length, slot.seq, last);
        slot.cached.push(active.prompt[i]!);
        if (last) slot.outputIndex = index;
      }
      active.nextPromptIndex = end;
      if (end === active.prompt.length) {
        if (this.batch.count >= this.promptFlushTokens) break;
        promptEnded = true;
      }
    }
    if (progressing.length > 0) {
      for (const slot of this.admitted) {
        const active = slot.active!;
        if (!group.has(slot) || !active.prefilling || active.pendingImage) continue;
        if (progressing.includes(active)) active.stepsPassedOver = 0;
        else active.stepsPassedOver++;
      }
    }
    if (this.batch.count === 0) return true;

    const decodeStarted = performance.now();
    let status = this.context.decode(this.batch);
    // the cells may lie scattered: with every idle cache dropped, a second try finds room
    if (status === DecodeStatus.noSpace && this.sharedPool && this.makeRoom(Infinity) > 0) status = this.context.decode(this.batch);
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
    for (const slot of inGroup) {
      const active = slot.active!;
      if (active.sharedPrefixEnd > 0 && active.nextPromptIndex === active.sharedPrefixEnd) {
        this.promptCache!.store(slot.cached.slice(0, active.sharedPrefixEnd), this.context.saveSequence(slot.seq));
        active.sharedPrefixEnd = 0;
      }
      if (active.checkpointAfterPrompt && slot.outputIndex >= 0 && active.nextPromptIndex === active.prompt.length) {
        const state = this.context.saveSequence(slot.seq);
        slot.checkpoint = { length: slot.cached.length, state, logits: this.context.logits(slot.outputIndex) };
        active.checkpointAfterPrompt = false;
      }
    }
    const elapsed = performance.now() - started;
    for (const active of prefillingThisStep) active.promptMs += elapsed;
    for (const active of progressing) this.reportProgress(active);
    // what a step of generating sequences produced, drafting and verification included: whether drafting pays in fact
    const speculation = prefillingThisStep.length === 0 ? this.speculation : undefined;
    const yieldStep = speculation && {
      generating: inGroup.filter((slot) => slot.outputIndex >= 0).length,
      drafted: inGroup.some((slot) => slot.draft),
      acceptedBefore: speculation.acceptedTokens,
    };
    for (const slot of inGroup) {
      if (slot.draft) this.verifyDraft(slot, slot.draft);
      else if (slot.outputIndex >= 0) this.sampleSlot(slot);
    }
    if (speculation && yieldStep) {
      const { generating, drafted, acceptedBefore } = yieldStep;
      speculation.recordYield(generating, drafted, generating + speculation.acceptedTokens - acceptedBefore, performance.now() - started);
    }
    return true;
  }

  /**
   * Admitted requests in the order their prompts take this step's room: prompts that can finish within
   * one step first, in admission order, then longer ones, fewest tokens left first. A short request that
   * arrives during a long prefill so starts at the next step instead of after the whole long prompt, and
   * a mostly cached turn goes before a cold prompt. A long prompt passed over in a step counts a step's
   * worth of tokens less from then on, so later prompts overtake it for a bounded time only.
   */
  private prefillOrder(): SequenceSlot[] {
    const left = (slot: SequenceSlot) => slot.active!.prompt.length - slot.active!.nextPromptIndex;
    const priority = (slot: SequenceSlot) => left(slot) - slot.active!.stepsPassedOver * this.batch.capacity;
    const short = this.admitted.filter((slot) => left(slot) <= this.batch.capacity);
    const long = this.admitted.filter((slot) => left(slot) > this.batch.capacity);
    return [...short, ...long.sort((a, b) => priority(a) - priority(b))];
  }

  /**
   * Tells a request how far its prompt is: after every step that processed part of it when it asked,
   * otherwise only for a prompt that spans several steps (its stream then hears from the engine at
   * every step, which keeps clients and proxies from timing out), and always once it is complete when
   * an earlier report went out, so that reports end at the whole prompt.
   */
  private reportProgress(active: ActiveRequest): void {
    if (!active.request.promptProgress && !active.progressReported && !active.prefilling) return;
    active.progressReported = true;
    active.emit({
      type: "progress", id: active.id, processed: active.nextPromptIndex, total: active.prompt.length,
      cached: active.cachedPromptTokens, ms: performance.now() - active.startedAt,
    });
  }

  // ---- the shared memory: with a unified KV cache, all sequences take their cells from one pool ----

  /** Cells held now, idle slots' cached prefixes included. */
  private usedCells(): number {
    return this.slots.reduce((sum, slot) => sum + slot.distinctCells(), 0);
  }

  /** Prompt cells admitted requests have yet to fill: held for them, so that admitted prompts always finish. */
  private reservedForPrompts(): number {
    return this.admitted.reduce((sum, slot) => sum + Math.max(0, slot.active!.prompt.length - slot.active!.nextPromptIndex), 0);
  }

  /**
   * Frees cells until `needed` are free by dropping idle slots' cached prefixes, least recently used
   * first (never those of `keep`); their states go to the host prompt cache first. Returns the cells free then.
   */
  private makeRoom(needed: number, ...keep: SequenceSlot[]): number {
    // a stream of its own holds a sequence's every token: this.limit stops it before the stream is full
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

  /** Whether the prompt fits beside what runs now; it waits in the queue until it does. Alone, it always fits. */
  private roomForPrompt(active: ActiveRequest, slot: SequenceSlot, source: PrefixSource): boolean {
    if (this.admitted.length === 0) return true;
    const cells = Math.max(active.prompt.length, active.promptTokenCount);
    let needed: number;
    if (source.kind === "own") {
      const kept = source.plan.fromCheckpoint ? 0 : Math.min(source.plan.keep, slot.cached.length);
      needed = cells + 1 - kept;
    } else if (source.kind === "copy") {
      needed = cells + 1 - source.keep; // copied cells are the source's own, tagged with one more sequence
    } else {
      needed = Math.max(cells, source.match.entry.tokens.length) + 1; // restored whole, then cut to the prefix
    }
    needed += this.reservedForPrompts();
    const keep = source.kind === "copy" ? [slot, source.from] : [slot];
    return this.makeRoom(needed, ...keep) >= needed;
  }

  /**
   * Cells for this step: each generating sequence's next token (and draft) comes first, after the
   * prompts' reserved cells. When they do not fit even with every idle cache dropped, drafts are left
   * out, then the most recently admitted sequences end as at a full context ("length"). Returns the
   * cells left for prompt tokens.
   */
  private roomForStep(group: Set<SequenceSlot>, drafts: Map<SequenceSlot, number[]> | undefined): number {
    const generating = this.admitted.filter((slot) => group.has(slot) && !slot.active!.prefilling && !slot.active!.pendingImage);
    const reserved = this.reservedForPrompts();
    const needed = () => generating.reduce((sum, slot) => sum + 1 + (drafts?.get(slot)?.length ?? 0), 0);
    let free = this.makeRoom(needed() + reserved);
    if (free - reserved < needed()) drafts?.clear();
    while (free - reserved < needed() && generating.length > 0) {
      const slot = generating.pop()!;
      this.release(slot, "length");
      free = this.makeRoom(needed() + reserved);
    }
    return Math.max(0, free - needed());
  }

  // ---- speculative decoding hooks (the work itself is in ./speculative/) ----

  /** Draft tokens for the group's generating sequences, when the engine speculates. */
  private planDrafts(group: Set<SequenceSlot>): Map<SequenceSlot, number[]> | undefined {
    if (!this.speculation) return undefined;
    // A scoring request's next tokens are known: nothing to draft.
    const generating = [...group].filter((slot) => slot.active && !slot.active.prefilling && !slot.active.request.forcedTokens);
    return this.speculation.plan(generating, this.batch.capacity, this.limit);
  }

  /** Puts a draft after the slot's next token, every row with logits to verify it from. */
  private addDraft(slot: SequenceSlot, draft: number[]): void {
    for (const token of draft) {
      this.batch.add(token, slot.cached.length, slot.seq, true);
      slot.cached.push(token);
    }
    slot.active!.draftTokens! += draft.length;
  }

  /**
   * Samples the slot's tokens from the verify rows, one after another, as plain decoding would, and
   * keeps draft tokens while they equal what was sampled (llama.cpp's rule: the output follows the
   * target's distribution exactly, and greedy output is unchanged). The first mismatch is the next
   * token; the memory cells of the rejected draft tokens are removed.
   */
  private verifyDraft(slot: SequenceSlot, draft: number[]): void {
    const active = slot.active!;
    const base = slot.outputIndex;
    const written = slot.cached.length;
    slot.truncate(written - draft.length);
    let accepted = 0;
    for (let i = 0; i <= draft.length; i++) {
      if (!this.sampleSlot(slot, undefined, base + i, draft[i])) break;
      if (i === draft.length || active.pendingToken !== draft[i]) break;
      accepted++;
      slot.cached.push(draft[i]!);
    }
    slot.draft = undefined;
    this.speculation!.settle(active, draft.length, accepted);
    if (slot.cached.length < written && !this.context.removeTokens(slot.seq, slot.cached.length, -1)) {
      this.context.clearSequence(slot.seq);
      slot.truncate(0);
      if (slot.active) this.endSlot(slot).fail("engine_failure", "Cannot remove rejected draft tokens from the sequence's memory");
    }
  }

  /** The request's sampler chain; while min_tokens is unmet, end-of-generation tokens are banned in it. */
  private createSampler(request: GenerateRequest, banEndOfGeneration: boolean): SamplerChain {
    const settings = { ...defaultSamplerSettings, ...request.sampling };
    // Whatever built the grammar, llama.cpp's recursive parser and its sampling cost must stay bounded.
    if (settings.grammar) checkGrammarBounds(settings.grammar);
    if (banEndOfGeneration) {
      settings.logitBias = [...settings.logitBias, ...this.endOfGenerationTokens().map((t): [number, number] => [t, -Infinity])];
    }
    return SamplerChain.create(this.model.vocab, this.model.trainedContextLength, settings);
  }

  private eogTokens: number[] | undefined;
  private endOfGenerationTokens(): number[] {
    if (!this.eogTokens) {
      this.eogTokens = [];
      for (let t = 0; t < this.model.vocab.size; t++) if (this.model.vocab.isEndOfGeneration(t)) this.eogTokens.push(t);
    }
    return this.eogTokens;
  }

  /**
   * Samples the slot's next token from the last decode's logits at `index`, or from `restored` ones.
   * True when the request goes on (the token is its pendingToken); `draftToken` is the draft token this
   * sample verifies, counted as accepted when they are equal and the token is output.
   */
  private sampleSlot(slot: SequenceSlot, restored?: Float32Array, index = slot.outputIndex, draftToken?: number): boolean {
    const active = slot.active!;
    if (active.request.forcedTokens) return this.scoreForcedToken(slot, restored ?? this.context.logits(index));
    const token = restored ? active.sampler!.sampleFrom(restored) : active.sampler!.sample(this.context, index);
    if (token === NO_TOKEN) {
      this.endSlot(slot).fail("invalid_request", "Cannot continue generating: the grammar allows no next token");
      return false;
    }
    if (active.firstTokenAt === 0) active.firstTokenAt = performance.now();
    if (active.stopTokenIds.has(token)) return this.release(slot, "stop", undefined, token);
    if (!active.request.ignoreEos && this.model.vocab.isEndOfGeneration(token)) {
      return this.release(slot, "stop");
    }
    active.generated++;
    if (token === draftToken) active.acceptedDraftTokens++;
    active.tokens.push(token);
    if (active.generated === active.request.minTokens) this.liftEndOfGenerationBan(active);
    const text = active.decoder.push(this.model.vocab.tokenToPiece(token, active.renderSpecialTokens));
    const pushed = active.stops.push(text);
    const logprobs = active.request.logprobs === undefined
      ? undefined
      : this.logprobsOf(restored ?? this.context.logits(index), token, active.request.logprobs);
    active.emit({ type: "token", id: active.id, token, text: pushed.text, ...(logprobs ? { logprobs } : {}) });
    if (pushed.stop) return this.release(slot, "stop", pushed.stop.stop);
    // The next step would store this token at position cached.length; stop before the context is full.
    if (active.generated >= active.maxTokens || slot.cached.length >= this.limit) {
      return this.release(slot, "length");
    }
    active.pendingToken = token;
    return true;
  }

  /** A scoring request's next forced token, with its log-probability from `logits`; ends the request after the last. */
  private scoreForcedToken(slot: SequenceSlot, logits: Float32Array): boolean {
    const active = slot.active!;
    const token = active.request.forcedTokens![active.generated]!;
    if (active.firstTokenAt === 0) active.firstTokenAt = performance.now();
    active.generated++;
    const logprobs = this.logprobsOf(logits, token, active.request.logprobs ?? 0);
    active.emit({ type: "token", id: active.id, token, text: logprobs.text, logprobs });
    if (active.generated >= active.maxTokens || slot.cached.length >= this.context.contextPerSequence) return this.release(slot, "length");
    active.pendingToken = token;
    return true;
  }

  /** min_tokens reached: the normal chain takes over, with the tokens so far in its penalty history. */
  private liftEndOfGenerationBan(active: ActiveRequest): void {
    active.sampler?.dispose();
    active.sampler = this.createSampler(active.request, false);
    for (const token of active.tokens) active.sampler.accept(token);
  }

  private logprobsOf(logits: Float32Array, token: number, top: number): TokenLogprobs {
    const result = computeLogprobs(logits, token, top);
    // Special tokens (tool-call markers, end of turn) carry their text, as vLLM reports them.
    const text = (t: number) => new TextDecoder().decode(this.model.vocab.tokenToPiece(t, true));
    return { token, text: text(token), logprob: result.logprob, top: result.top.map((e) => ({ ...e, text: text(e.token) })) };
  }

  private admitWaiting(): void {
    while (this.queue.length > 0) {
      const next = this.nextAdmission();
      if (!next) return;
      const { index, active, slot, source } = next;
      if (!this.roomForPrompt(active, slot, source)) return;
      this.queue.splice(index, 1);
      for (let i = 0; i < index; i++) this.queue[i]!.overtaken++;
      if (source.kind === "own") this.reuseCache(slot, active, source.plan);
      else if (source.kind === "copy") this.copyPrefix(slot, source.from, source.keep);
      else this.restoreFromHost(slot, active, source.match);
      if (!this.canRollBack && active.prompt.length - slot.cached.length >= CHECKPOINT_MIN_NEW_TOKENS) {
        active.checkpointAfterPrompt = true;
      }
      active.nextPromptIndex = slot.cached.length;
      active.sharedPrefixEnd = this.sharedPrefixEnd(slot, active);
      active.cachedPromptTokens = slot.cached.length;
      if (this.speculation) active.draftTokens = 0;
      active.startedAt = performance.now();
      slot.active = active;
      slot.lastUsed = ++this.clock;
      this.admitted.push(slot);
    }
  }

  /**
   * The waiting request a free sequence goes to, with that sequence and where its prefix comes from: of
   * the oldest ADMISSION_WINDOW requests, the one with the fewest prompt tokens left to process (the
   * oldest on ties), unless the oldest was overtaken MAX_OVERTAKEN times already. Undefined when no
   * sequence is free.
   */
  private nextAdmission(): { index: number; active: ActiveRequest; slot: SequenceSlot; source: PrefixSource } | undefined {
    let best: { index: number; active: ActiveRequest; slot: SequenceSlot; source: PrefixSource; work: number } | undefined;
    const window = this.queue[0]!.overtaken >= MAX_OVERTAKEN ? 1 : Math.min(ADMISSION_WINDOW, this.queue.length);
    for (let index = 0; index < window; index++) {
      const active = this.queue[index]!;
      const slot = this.pickSlot(active.prompt);
      if (!slot) return undefined;
      const source = this.prefixSource(slot, active);
      const work = active.prompt.length - reusedTokens(source);
      if (!best || work < best.work) best = { index, active, slot, source, work };
    }
    return best;
  }

  /**
   * The best source of the prompt's leading tokens for this slot: its own memory, unless another
   * sequence's cells or a host-cached state give it more. Prompts with images take their own memory only.
   */
  private prefixSource(slot: SequenceSlot, active: ActiveRequest): PrefixSource {
    const { prompt, images } = active;
    let plan = planReuse(slot.cached, prompt, this.canRollBack, slot.checkpoint?.length);
    // An image is kept whole or processed again whole.
    const cut = imageCutAt(images, plan.keep);
    if (cut) plan = this.canRollBack ? { keep: cut.start, fromCheckpoint: false } : { keep: 0, fromCheckpoint: false };
    const own: PrefixSource = { kind: "own", plan };
    if (images.length > 0) return own;
    let best: PrefixSource = own;
    let bestKeep = plan.keep;
    // A recurrent state cannot be cut back to a prefix, so only attention-only models copy cells.
    if (this.canRollBack) {
      // across streams the other sequence's whole memory is copied: worth it only for a clear gain
      const copyGain = this.sharedPool ? 1 : PROMPT_CACHE_MIN_TOKENS;
      for (const other of this.slots) {
        if (other === slot) continue;
        const keep = Math.min(commonPrefixLength(other.cached, prompt), prompt.length - 1);
        if (keep >= bestKeep + copyGain) {
          best = { kind: "copy", from: other, keep };
          bestKeep = keep;
        }
      }
    }
    const match = this.promptCache?.find(prompt);
    // restoring copies the whole state in: worth it only for a clear gain over what is held already
    if (match && match.keep >= bestKeep + PROMPT_CACHE_MIN_TOKENS) best = { kind: "cache", match };
    return best;
  }

  /**
   * For a recurrent model, whose state cannot be cut back to a shared prefix afterwards: the longest start
   * this prompt shares with what another session sent (agents' common system prompt and tools: in another
   * sequence, a waiting request or a host-cached state), when the prompt goes on past it and the host
   * cache does not hold it yet. The first session's state there is lost, but the second session saves it
   * and every later one restores it. 0: none.
   */
  private sharedPrefixEnd(slot: SequenceSlot, active: ActiveRequest): number {
    if (this.canRollBack || !this.promptCache || active.images.length > 0) return 0;
    const { prompt } = active;
    // what another session sent lies in another sequence, a waiting request or a host-cached state
    let shared = this.promptCache.longestSharedPrefix(prompt);
    for (const other of this.slots) {
      if (other === slot) continue;
      shared = Math.max(shared, commonPrefixLength(other.cached, prompt));
      // a prompt still being processed counts with what it will hold
      if (other.active) shared = Math.max(shared, commonPrefixLength(other.active.prompt, prompt));
    }
    for (const waiting of this.queue) if (waiting !== active) shared = Math.max(shared, commonPrefixLength(waiting.prompt, prompt));
    const worthSaving = shared >= PROMPT_CACHE_MIN_TOKENS && shared >= active.nextPromptIndex + CHECKPOINT_MIN_NEW_TOKENS
      && shared <= prompt.length - CHECKPOINT_MIN_NEW_TOKENS;
    return worthSaving && !this.promptCache.covers(prompt.subarray(0, shared)) ? shared : 0;
  }

  /**
   * Before the slot's memory from `keep` on is dropped: its state goes to the host prompt cache when that
   * loses enough tokens and no other sequence or cached entry holds them. A recurrent model's checkpoint
   * (its state after an earlier prompt, with logits) goes there too when it is about to be lost.
   */
  private keepInHost(slot: SequenceSlot, keep: number): void {
    const cache = this.promptCache;
    if (!cache) return;
    const checkpoint = slot.checkpoint;
    if (checkpoint && checkpoint.length > keep && checkpoint.length >= PROMPT_CACHE_MIN_TOKENS) {
      cache.store(slot.cached.slice(0, checkpoint.length), checkpoint.state, checkpoint.logits);
    }
    if (slot.cached.length - keep < PROMPT_CACHE_MIN_TOKENS || slot.cached.length === checkpoint?.length) return;
    if (cache.covers(slot.cached) || this.heldElsewhere(slot)) return;
    cache.store(slot.cached, this.context.saveSequence(slot.seq));
  }

  /** Whether another sequence holds every cached token of this slot (as a prefix that can be copied). */
  private heldElsewhere(slot: SequenceSlot): boolean {
    if (!this.canRollBack) return false;
    return this.slots.some((other) => other !== slot && other.cached.length >= slot.cached.length
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
  private restoreFromHost(slot: SequenceSlot, active: ActiveRequest, match: PromptCacheMatch): void {
    const { entry, keep } = match;
    if (!this.loadState(slot, entry.state, entry.tokens, keep)) return;
    this.promptCache!.touch(entry);
    if (entry.logits) {
      // a recurrent checkpoint: it serves this slot's next prompts as its own would
      slot.checkpoint = { length: keep, state: entry.state, logits: entry.logits };
      if (keep === active.prompt.length) active.restoredLogits = entry.logits;
    }
  }

  /**
   * The slot's memory (kept in the host cache first, when worth it) is replaced by `state`, a save of
   * `tokens`, cut back to their first `keep`. False, with the slot empty, when llama.cpp refuses either.
   */
  private loadState(slot: SequenceSlot, state: Uint8Array, tokens: ArrayLike<number>, keep: number): boolean {
    this.emptySlot(slot);
    // the state needs free cells for all its tokens: idle caches make way when they are missing
    const restored = this.context.restoreSequence(slot.seq, state)
      || (this.makeRoom(tokens.length + 1, slot) > tokens.length && this.context.restoreSequence(slot.seq, state));
    if (!restored || (keep < tokens.length && !this.context.removeTokens(slot.seq, keep, -1))) {
      this.context.clearSequence(slot.seq);
      return false;
    }
    slot.cached = Array.from({ length: keep }, (_, i) => tokens[i]!);
    return true;
  }

  /** The slot's memory goes to the host cache (when worth keeping there) and leaves the KV cache. */
  private emptySlot(slot: SequenceSlot): void {
    this.keepInHost(slot, 0);
    this.context.clearSequence(slot.seq);
    slot.truncate(0);
  }

  /** Keeps what the prompt can reuse of the slot's memory (live cache or checkpoint) and drops the rest. */
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
    if (plan.keep === 0 || !this.context.removeTokens(slot.seq, plan.keep, -1)) {
      this.context.clearSequence(slot.seq);
      slot.truncate(0);
    } else {
      slot.truncate(plan.keep);
    }
  }

  /** The idle slot that keeps the most cached tokens for this prompt; least recently used on ties. */
  private pickSlot(prompt: Int32Array): SequenceSlot | undefined {
    let best: SequenceSlot | undefined;
    let bestKeep = -1;
    for (const slot of this.slots) {
      if (slot.active) continue;
      const keep = planReuse(slot.cached, prompt, this.canRollBack, slot.checkpoint?.length).keep;
      if (keep > bestKeep || (keep === bestKeep && slot.lastUsed < best!.lastUsed)) {
        best = slot;
        bestKeep = keep;
      }
    }
    return best;
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
      this.context.clearSequence(slot.seq);
      slot.truncate(0);
      this.release(slot, "cancelled");
    }
  }

  /** Ends the slot's request; returns false, so that sampleSlot can `return this.release(…)`. */
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
      this.context.clearSequence(slot.seq);
      slot.truncate(0);
      slot.active = undefined;
      this.byId.delete(active.id);
      active.fail("engine_failure", message);
    }
    this.admitted.length = 0;
  }
}

/** Prompt tokens a prefix source gives an admitted request without processing them. */
function reusedTokens(source: PrefixSource): number {
  if (source.kind === "own") return source.plan.keep;
  if (source.kind === "copy") return source.keep;
  return source.match.keep;
}
