// The draft-model drafter: a small model with the target's vocabulary, in a context of its own with
// as many sequences as the target's, proposes tokens greedily.
//
// Its memory for a sequence always ends where the target's does (the target's tokens plus the one it
// decodes next), so each step first catches up on what the target accepted since the last draft, in
// one batch for every sequence, then drafts one token per sequence per decode. Afterwards the drafted
// tokens are taken out again: attention memory drops them (llama_memory_seq_rm); a recurrent or hybrid
// draft restores the recurrent state saved before drafting (a few KiB: only the recurrent part) and
// drops the attention part's cells.
import { DecodeStatus, LlamaContext, LlamaModel, TokenBatch, type KvCacheType } from "../../../ffi/llama.ts";
import { commonPrefixLength } from "../planning/prefix-reuse.ts";
import type { Drafter, DraftRequest } from "./drafter.ts";
import { draftIncompatibility } from "./compatibility.ts";
import { EngineError } from "../types.ts";

export interface DraftContextOptions {
  sequences: number;
  contextPerSequence: number;
  batchSize: number;
  threads: number;
  /** The target's context, whose worker threads the draft's context shares. */
  threadsOf?: LlamaContext;
  gpuLayers: number;
  flashAttention?: "auto" | "on" | "off";
  kvCacheType?: KvCacheType;
}

export class ModelDrafter implements Drafter {
  /** Tokens the draft memory holds, per sequence. */
  private readonly held: number[][];
  private readonly batch: TokenBatch;
  private readonly recurrent: boolean;

  private constructor(
    private readonly model: LlamaModel, private readonly context: LlamaContext,
    private readonly targetVocabSize: number, private readonly minProbability: number,
  ) {
    this.held = Array.from({ length: context.sequences }, () => []);
    this.batch = new TokenBatch(context.batchSize);
    this.recurrent = model.isRecurrentOrHybrid;
  }

  /** Loads the draft model beside `target`; refuses, with the reason, a draft that cannot serve it. */
  static load(path: string, target: LlamaModel, options: DraftContextOptions, minProbability: number): ModelDrafter {
    const model = LlamaModel.load(path, { gpuLayers: options.gpuLayers });
    try {
      const why = draftIncompatibility(target, model);
      if (why) throw new EngineError("invalid_request", `Cannot use "${path}" as draft model for "${target.path}": ${why}`);
      const context = LlamaContext.create(model, {
        contextSize: options.contextPerSequence * options.sequences,
        // the last token of every sequence goes in one decode (catchUp)
        batchSize: Math.max(options.batchSize, options.sequences),
        sequences: options.sequences,
        threads: options.threads,
        ...(options.threadsOf ? { threadsOf: options.threadsOf } : {}),
        flashAttention: options.flashAttention ?? "auto",
        ...(options.kvCacheType ? { kvCacheType: options.kvCacheType } : {}),
      });
      return new ModelDrafter(model, context, target.vocab.size, minProbability);
    } catch (error) {
      model.dispose();
      throw error;
    }
  }

  get path(): string {
    return this.model.path;
  }

  draft(requests: DraftRequest[]): number[][] {
    const drafts = requests.map((): number[] => []);
    const live = requests.map((r, i) => ({ r, i })).filter(({ r }) => r.tokens.length <= this.context.contextPerSequence - r.max);
    if (live.length === 0) return drafts;
    const outputs = this.catchUp(live.map(({ r }) => r));
    if (!outputs) return drafts;
    const saved = this.recurrent ? live.map(({ r }) => this.context.saveRecurrentState(r.seq)) : [];
    let active = live.map(({ r, i }, k) => ({ r, i, k, output: outputs[k]! }));
    while (active.length > 0) {
      this.batch.clear();
      const next: typeof active = [];
      for (const entry of active) {
        const token = this.pick(entry.output);
        if (token < 0) continue;
        const draft = drafts[entry.i]!;
        draft.push(token);
        if (draft.length >= entry.r.max) continue;
        entry.output = this.batch.add(token, entry.r.tokens.length + draft.length - 1, entry.r.seq, true);
        next.push(entry);
      }
      if (next.length === 0 || this.context.decode(this.batch) !== DecodeStatus.ok) break;
      active = next;
    }
    live.forEach(({ r, i }, k) => this.rollBack(r, drafts[i]!.length, saved[k]));
    return drafts;
  }

  /** The greedy draft token at a batch index, or -1 when the draft is not confident enough (or proposes a token the target lacks). */
  private pick(index: number): number {
    const logits = this.context.logitsView(index);
    const n = Math.min(logits.length, this.targetVocabSize);
    let best = 0;
    for (let t = 1; t < n; t++) if (logits[t]! > logits[best]!) best = t;
    if (this.minProbability > 0) {
      const top = logits[best]!;
      let sum = 0;
      for (let t = 0; t < n; t++) sum += Math.exp(logits[t]! - top);
      if (1 / sum < this.minProbability) return -1;
    }
    return best;
  }

  /**
   * Brings each sequence's draft memory to its request's tokens (the decode of the last token is the
   * one drafting starts from). Every token but the last goes in as many decodes as it takes; the last
   * tokens go in one final decode, so that all their logits are still there when drafting reads them.
   * Returns the batch index of each request's last token, or undefined when a decode failed (the memory
   * of those sequences is then dropped).
   */
  private catchUp(requests: DraftRequest[]): number[] | undefined {
    const from = requests.map((r) => this.keepPrefix(r));
    const fail = () => {
      for (const r of requests) this.forget(r.seq);
      return undefined;
    };
    let pending = requests.map((_, k) => k).filter((k) => from[k]! < requests[k]!.tokens.length - 1);
    while (pending.length > 0) {
      this.batch.clear();
      for (const k of pending) {
        const { tokens, seq } = requests[k]!;
        while (from[k]! < tokens.length - 1 && this.batch.free > 0) {
          const position = from[k]!++;
          this.batch.add(tokens[position]!, position, seq, false);
        }
      }
      if (this.context.decode(this.batch) !== DecodeStatus.ok) return fail();
      for (const k of pending) this.held[requests[k]!.seq] = requests[k]!.tokens.slice(0, from[k]);
      pending = pending.filter((k) => from[k]! < requests[k]!.tokens.length - 1);
    }
    this.batch.clear();
    const outputs = requests.map((r) => this.batch.add(r.tokens[r.tokens.length - 1]!, r.tokens.length - 1, r.seq, true));
    if (this.context.decode(this.batch) !== DecodeStatus.ok) return fail();
    for (const r of requests) this.held[r.seq] = r.tokens.slice();
    return outputs;
  }

  /** Drops what the draft memory holds beyond the request's prefix; returns where catching up starts. */
  private keepPrefix(r: DraftRequest): number {
    const held = this.held[r.seq]!;
    // the last token must be decoded again for its logits: keep at most all but it
    const keep = Math.min(commonPrefixLength(held, r.tokens), r.tokens.length - 1);
    if (keep === held.length) return keep;
    if (!this.recurrent && this.context.removeTokens(r.seq, keep, -1)) {
      held.length = keep;
      return keep;
    }
    this.forget(r.seq);
    return 0;
  }

  /** Takes the drafted tokens (all but the last, which was never decoded) out of the draft memory again. */
  private rollBack(r: DraftRequest, drafted: number, saved: Uint8Array | undefined): void {
    const end = r.tokens.length;
    this.held[r.seq] = r.tokens.slice();
    if (drafted <= 1) return;
    const restored = saved === undefined || this.context.restoreRecurrentState(r.seq, saved);
    if (!restored || !this.context.removeTokens(r.seq, end, -1)) this.forget(r.seq);
  }

  forget(seq: number): void {
    this.context.clearSequence(seq);
    this.held[seq] = [];
  }

  dispose(): void {
    this.context.dispose();
    this.model.dispose();
  }
}
