// One request while the scheduler owns it: its prompt, sampler, output text pipeline and timings.
import type { SamplerChain } from "../../ffi/sampler.ts";
import { StopStringMatcher } from "./stop-strings.ts";
import { Utf8PieceDecoder } from "./utf8-stream.ts";
import type { EngineEvent, FinishReason, GenerateRequest, RequestUsage } from "./types.ts";
import { disposeImages, type ImageSpan } from "./image-prompt.ts";
import type { DiskEntry } from "./prompt-cache/disk-store.ts";
import type { ServedAdapter } from "./lora-adapters.ts";
import { BASE_ADAPTER } from "./planning/adapter-turns.ts";
import { marksUpTo } from "./planning/recurrent-marks.ts";

export type EventSink = (event: EngineEvent) => void;

export class ActiveRequest {
  /** Next prompt token to put into a batch. */
  nextPromptIndex = 0;
  /** Sampled but not yet decoded; fed at the next step. */
  pendingToken = -1;
  /** Generated tokens, kept while a min_tokens chain must be replaced by the normal one. */
  readonly tokens: number[] = [];
  readonly stopTokenIds: ReadonlySet<number>;
  generated = 0;
  cachedPromptTokens = 0;
  /** Save a checkpoint of the sequence state once the whole prompt is decoded. */
  checkpointAfterPrompt = false;
  /**
   * Where the prompt stops sharing tokens with another sequence's (recurrent models): a step ends
   * there and the state goes to the host cache, for the next prompt with the same start. 0: none.
   */
  sharedPrefixEnd = 0;
  /** A disk-cached state read into host memory for this request; it is weighed for admission once that is done. */
  awaitingDisk: DiskEntry | undefined;
  /** A restored checkpoint's logits: the first token is sampled from them, with no decode. */
  restoredLogits: Float32Array | undefined;
  cancelled = false;
  /** The LoRA adapter it runs with (GenerateRequest.adapter); none: the base model. */
  adapter: ServedAdapter | undefined;
  /** Times a later request was admitted before this one while it waited (bounded by MAX_OVERTAKEN). */
  overtaken = 0;
  /** Times it gave its sequence to a mostly cached request while its prompt was processed (planning/preemption.ts). */
  yielded = 0;
  /** Steps since its prompt last took tokens in which other prompts did (see Scheduler.prefillOrder). */
  stepsPassedOver = 0;
  /** Whether it sat out a step, its first token sampled, for the prompts admitted with it (planning/step-budget.ts). */
  heldForPrompts = false;
  /** Its token events while they wait for the end of that step (undefined: none wait). */
  private heldEvents: EngineEvent[] | undefined;
  /** A progress event went out for this prompt (the complete prompt is then reported too). */
  progressReported = false;
  /** Speculative decoding counts; undefined when the engine does not speculate. */
  draftTokens: number | undefined;
  acceptedDraftTokens = 0;
  sampler: SamplerChain | undefined;
  readonly decoder = new Utf8PieceDecoder();
  readonly stops: StopStringMatcher;
  readonly maxTokens: number;
  /**
   * Special tokens are written into the text when asked, and always under a grammar: llama.cpp's grammar
   * matches a special token by its text, so leaving it out would show text the grammar did not accept.
   */
  readonly renderSpecialTokens: boolean;

  readonly submittedAt = performance.now();
  startedAt = 0;
  firstTokenAt = 0;
  promptMs = 0;

  /** Prompt tokens as usage counts them: text tokens plus each image's embedding tokens. */
  readonly promptTokenCount: number;

  /** `images` are the prompt's image spans, in prompt order; the request owns their chunks. */
  constructor(readonly request: GenerateRequest, readonly prompt: Int32Array, readonly emit: EventSink, readonly images: ImageSpan[] = []) {
    this.promptTokenCount = images.reduce((count, image) => count + image.tokens - image.positions, prompt.length);
    this.stops = new StopStringMatcher(request.stop ?? [], { includeStopString: request.includeStopString ?? false });
    this.maxTokens = request.forcedTokens ? request.forcedTokens.length
      : request.maxTokens === undefined || request.maxTokens < 0 ? Infinity : request.maxTokens;
    this.stopTokenIds = new Set(request.stopTokenIds ?? []);
    this.renderSpecialTokens = request.renderSpecialTokens ?? Boolean(request.sampling?.grammar);
  }

  get id(): string {
    return this.request.id;
  }

  /** Its adapter's id, which KV states are keyed by (BASE_ADAPTER without one). */
  get adapterId(): number {
    return this.adapter?.id ?? BASE_ADAPTER;
  }

  get prefilling(): boolean {
    return this.nextPromptIndex < this.prompt.length;
  }

  /** The image that starts at the next prompt position: it goes through the encoder, not the token batch. */
  get pendingImage(): ImageSpan | undefined {
    return this.images.find((image) => image.start === this.nextPromptIndex);
  }

  /** Where the next text run of the prompt ends: the next image or the prompt's end. */
  textEnd(): number {
    const next = this.images.find((image) => image.start >= this.nextPromptIndex);
    return next ? next.start : this.prompt.length;
  }

  usage(now = performance.now()): RequestUsage {
    return {
      promptTokens: this.promptTokenCount,
      cachedPromptTokens: this.cachedPromptTokens,
      completionTokens: this.generated,
      timeToFirstTokenMs: this.firstTokenAt ? this.firstTokenAt - this.submittedAt : 0,
      promptMs: this.promptMs,
      decodeMs: this.firstTokenAt ? now - this.firstTokenAt : 0,
      queueMs: (this.startedAt || now) - this.submittedAt,
      ...(this.draftTokens !== undefined ? { draftTokens: this.draftTokens, acceptedDraftTokens: this.acceptedDraftTokens } : {}),
    };
  }

  /**
   * Tells the client how far its prompt is: after every step that processed part of it when it asked,
   * otherwise only for a prompt that spans several steps (its stream then hears from the engine at
   * every step, which keeps clients and proxies from timing out), and always once it is complete when
   * an earlier report went out, so that reports end at the whole prompt.
   */
  reportProgress(): void {
    if (!this.request.promptProgress && !this.progressReported && !this.prefilling) return;
    this.progressReported = true;
    this.emit({
      type: "progress", id: this.id, processed: this.nextPromptIndex, total: this.prompt.length,
      cached: this.cachedPromptTokens, ms: performance.now() - this.startedAt,
    });
  }

  /** A token event, or kept back while holdTokens() is in force. */
  emitToken(event: Extract<EngineEvent, { type: "token" }>): void {
    if (this.heldEvents) this.heldEvents.push(event);
    else this.emit(event);
  }

  /** Keeps its token events back until releaseTokens(): its first token waits for the burst it sits out a step for. */
  holdTokens(): void {
    this.heldEvents ??= [];
  }

  /** Emits the token events kept back, in order; its first token counts from now. */
  releaseTokens(): void {
    const held = this.heldEvents;
    if (!held) return;
    this.heldEvents = undefined;
    if (held.length > 0) this.firstTokenAt = performance.now();
    for (const event of held) this.emit(event);
  }

  /** Emits the text still held back (partial UTF-8, possible stop prefixes) and the final event. */
  finish(reason: FinishReason, stop?: string, stopToken?: number): void {
    this.releaseTokens();
    if (reason !== "cancelled" && stop === undefined) {
      let tail = "";
      const rest = this.decoder.flush();
      const pushed = rest ? this.stops.push(rest) : undefined;
      tail += pushed?.text ?? "";
      if (pushed?.stop) {
        reason = "stop";
        stop = pushed.stop.stop;
      } else {
        tail += this.stops.flush();
      }
      if (tail) this.emit({ type: "token", id: this.id, token: -1, text: tail });
    }
    this.release();
    this.emit({
      type: "done", id: this.id, finishReason: reason, ...(stop !== undefined ? { stop } : {}),
      ...(stopToken !== undefined ? { stopToken } : {}), usage: this.usage(),
    });
  }

  /** Frees what the request holds natively: its sampler chain and its image chunks. */
  private release(): void {
    this.sampler?.dispose();
    this.sampler = undefined;
    disposeImages(this.images);
  }

  fail(code: Extract<EngineEvent, { type: "error" }>["code"], message: string): void {
    this.releaseTokens();
    this.release();
    this.emit({ type: "error", id: this.id, code, message });
  }
}

export interface Checkpoint {
  /** The state covers cached[0 .. length). */
  length: number;
  state: Uint8Array;
  /** The logits after cached[length - 1], so that the same prompt again needs no decode at all. */
  logits: Float32Array;
}

/** The recurrent part of a sequence's state after its first `length` cached tokens (planning/recurrent-marks.ts). */
export interface RecurrentMark {
  length: number;
  state: Uint8Array;
}

/** One of the context's parallel sequences and the tokens its memory currently holds. */
export class SequenceSlot {
  cached: number[] = [];
  /** Saved state of a prefix of `cached`, for models whose memory cannot roll back. */
  checkpoint: Checkpoint | undefined;
  /** Marks along `cached` (recurrent models), ascending by length. */
  marks: RecurrentMark[] = [];
  active: ActiveRequest | undefined;
  lastUsed = 0;
  /** The session of the request that last used this memory (RequestSchedule.session), when it said. */
  session: string | undefined;
  /** The LoRA adapter its memory was computed under (none: the base model); a state is wrong under any other. */
  adapter: ServedAdapter | undefined;
  /** Batch index whose logits this slot samples from after the current decode, or -1. */
  outputIndex = -1;
  /** Draft tokens in the current decode after the slot's next token (speculative decoding), to verify. */
  draft: number[] | undefined;
  /**
   * Other slots whose leading cells are this slot's own (llama_memory_seq_cp tags the same cells with
   * both sequences in a unified KV cache), and for how many positions.
   */
  readonly sharedWith = new Map<SequenceSlot, number>();
  constructor(readonly seq: number) {}

  /** Its adapter's id (BASE_ADAPTER without one), which states are keyed by. */
  get adapterId(): number {
    return this.adapter?.id ?? BASE_ADAPTER;
  }

  /** The lengths its marks cover, ascending (what planReuse weighs). */
  markLengths(): number[] {
    return this.marks.map((mark) => mark.length);
  }

  /** Forgets cached tokens from `length` on, and a checkpoint or marks that covered any of them. */
  truncate(length: number): void {
    this.cached.length = Math.min(this.cached.length, length);
    if (this.checkpoint && this.checkpoint.length > length) this.checkpoint = undefined;
    if (this.marks.length > 0 && this.marks.at(-1)!.length > length) this.marks = marksUpTo(this.marks, length);
    for (const [other, shared] of this.sharedWith) {
      if (shared <= length) continue;
      if (length === 0) {
        this.sharedWith.delete(other);
        other.sharedWith.delete(this);
      } else {
        this.sharedWith.set(other, length);
        other.sharedWith.set(this, length);
      }
    }
  }

  /**
   * After copying `source`'s first `length` cells into this (empty) slot: they are shared with the
   * source and with every slot the source shares them with.
   */
  shareFrom(source: SequenceSlot, length: number): void {
    const links: Array<[SequenceSlot, number]> = [[source, length]];
    for (const [other, shared] of source.sharedWith) if (other !== this) links.push([other, Math.min(shared, length)]);
    for (const [other, shared] of links) {
      this.sharedWith.set(other, shared);
      other.sharedWith.set(this, shared);
    }
  }

  /** Cells only this slot holds, or held by slots of higher sequence id: summed over all slots, each cell counts once. */
  distinctCells(): number {
    let shared = 0;
    for (const [other, length] of this.sharedWith) if (other.seq < this.seq) shared = Math.max(shared, length);
    return Math.max(0, this.cached.length - shared);
  }
}
