// What a sequence does with its logits after a decode step: sample its next token with its own chain (or
// score a forced one), check stop conditions, stream the text, and verify a speculative draft. The
// scheduler owns the sequences; this ends a request through the `ends` it is given.
import { SamplerChain, defaultSamplerSettings, type LlamaContext, type LlamaModel } from "../../ffi/llama.ts";
import { NO_TOKEN } from "../../ffi/sampler.ts";
import type { ActiveRequest, SequenceSlot } from "./sequence.ts";
import type { GenerateRequest, TokenLogprobs } from "./types.ts";
import { computeLogprobs } from "./logprobs.ts";
import { checkGrammarBounds } from "../chat/structured/grammar-bounds.ts";
import type { Speculation } from "./speculative/speculation.ts";

/** How the scheduler ends a slot's request; both return false, so that sampling can `return ends.release(…)`. */
export interface RequestEnds {
  release(slot: SequenceSlot, reason: "stop" | "length", stop?: string, stopToken?: number): false;
  fail(slot: SequenceSlot, code: "invalid_request" | "engine_failure", message: string): false;
}

export class TokenOutput {
  private eogTokens: number[] | undefined;

  constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    /** Most tokens one sequence may hold. */
    private readonly limit: number,
    private readonly ends: RequestEnds,
    private readonly speculation?: Speculation,
  ) {}

  /** The request's sampler chain; while min_tokens is unmet, end-of-generation tokens are banned in it. */
  createSampler(request: GenerateRequest, banEndOfGeneration: boolean): SamplerChain {
    const settings = { ...defaultSamplerSettings, ...request.sampling };
    // Whatever built the grammar, llama.cpp's recursive parser and its sampling cost must stay bounded.
    if (settings.grammar) checkGrammarBounds(settings.grammar);
    if (banEndOfGeneration) {
      settings.logitBias = [...settings.logitBias, ...this.endOfGenerationTokens().map((t): [number, number] => [t, -Infinity])];
    }
    return SamplerChain.create(this.model.vocab, this.model.trainedContextLength, settings);
  }

  /**
   * Samples the slot's next token from the last decode's logits at `index`, or from `restored` ones.
   * True when the request goes on (the token is its pendingToken); `draftToken` is the draft token this
   * sample verifies, counted as accepted when they are equal and the token is output.
   */
  sample(slot: SequenceSlot, restored?: Float32Array, index = slot.outputIndex, draftToken?: number): boolean {
    const active = slot.active!;
    if (active.request.forcedTokens) return this.scoreForcedToken(slot, restored ?? this.context.logits(index));
    const token = restored ? active.sampler!.sampleFrom(restored) : active.sampler!.sample(this.context, index);
    if (token === NO_TOKEN) return this.ends.fail(slot, "invalid_request", "Cannot continue generating: the grammar allows no next token");
    if (active.firstTokenAt === 0) active.firstTokenAt = performance.now();
    if (active.stopTokenIds.has(token)) return this.ends.release(slot, "stop", undefined, token);
    if (!active.request.ignoreEos && this.model.vocab.isEndOfGeneration(token)) return this.ends.release(slot, "stop");
    active.generated++;
    if (token === draftToken) active.acceptedDraftTokens++;
    active.tokens.push(token);
    if (active.generated === active.request.minTokens) this.liftEndOfGenerationBan(active);
    const text = active.decoder.push(this.model.vocab.tokenToPiece(token, active.renderSpecialTokens));
    const pushed = active.stops.push(text);
    const logprobs = active.request.logprobs === undefined
      ? undefined
      : this.logprobsOf(restored ?? this.context.logits(index), token, active.request.logprobs);
    active.emitToken({ type: "token", id: active.id, token, text: pushed.text, ...(logprobs ? { logprobs } : {}) });
    if (pushed.stop) return this.ends.release(slot, "stop", pushed.stop.stop);
    // The next step would store this token at position cached.length; stop before the context is full.
    if (active.generated >= active.maxTokens || slot.cached.length >= this.limit) return this.ends.release(slot, "length");
    active.pendingToken = token;
    return true;
  }

  /**
   * Samples the slot's tokens from the verify rows, one after another, as plain decoding would, and
   * keeps draft tokens while they equal what was sampled (llama.cpp's rule: the output follows the
   * target's distribution exactly, and greedy output is unchanged). The first mismatch is the next
   * token; the memory cells of the rejected draft tokens are removed.
   */
  verifyDraft(slot: SequenceSlot, draft: number[]): void {
    const active = slot.active!;
    const base = slot.outputIndex;
    const written = slot.cached.length;
    slot.truncate(written - draft.length);
    let accepted = 0;
    for (let i = 0; i <= draft.length; i++) {
      if (!this.sample(slot, undefined, base + i, draft[i])) break;
      if (i === draft.length || active.pendingToken !== draft[i]) break;
      accepted++;
      slot.cached.push(draft[i]!);
    }
    slot.draft = undefined;
    this.speculation!.settle(active, draft.length, accepted);
    if (slot.cached.length < written && !this.context.removeTokens(slot.seq, slot.cached.length, -1)) {
      this.context.clearSequence(slot.seq);
      slot.truncate(0);
      if (slot.active) this.ends.fail(slot, "engine_failure", "Cannot remove rejected draft tokens from the sequence's memory");
    }
  }

  /** A scoring request's next forced token, with its log-probability from `logits`; ends the request after the last. */
  private scoreForcedToken(slot: SequenceSlot, logits: Float32Array): boolean {
    const active = slot.active!;
    const token = active.request.forcedTokens![active.generated]!;
    if (active.firstTokenAt === 0) active.firstTokenAt = performance.now();
    active.generated++;
    const logprobs = this.logprobsOf(logits, token, active.request.logprobs ?? 0);
    active.emit({ type: "token", id: active.id, token, text: logprobs.text, logprobs });
    if (active.generated >= active.maxTokens || slot.cached.length >= this.context.contextPerSequence) return this.ends.release(slot, "length");
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

  private endOfGenerationTokens(): number[] {
    if (!this.eogTokens) {
      this.eogTokens = [];
      for (let t = 0; t < this.model.vocab.size; t++) if (this.model.vocab.isEndOfGeneration(t)) this.eogTokens.push(t);
    }
    return this.eogTokens;
  }
}
