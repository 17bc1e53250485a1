// A llama_context: the KV cache / recurrent state of up to n_seq_max sequences over one model.
import { ptr, toArrayBuffer, type Pointer } from "bun:ffi";
import { loadNative, withLlamaError } from "./native.ts";
import { StructBuffer, contextParamsLayout, perfContextLayout } from "./layouts.ts";
import { NativeHandle } from "./disposable.ts";
import type { LlamaModel } from "./model.ts";
import type { TokenBatch } from "./batch.ts";
import type { Native } from "./symbols.ts";
import { asPointer } from "./pointer.ts";
import { CpuThreadpool } from "./threadpool.ts";

export type FlashAttention = "auto" | "on" | "off";
export type KvCacheType = "f16" | "q8_0" | "q4_0" | "f32";
export type Pooling = "unspecified" | "none" | "mean" | "cls" | "last" | "rank";

export interface ContextOptions {
  /** Total context over all sequences, in tokens. */
  contextSize: number;
  /** Most tokens one decode call takes. */
  batchSize: number;
  /** Physical micro-batch size. Default: min(batchSize, 512). */
  microBatchSize?: number;
  /** Parallel sequences. Default: 1. */
  sequences?: number;
  threads: number;
  threadsBatch?: number;
  flashAttention?: FlashAttention;
  kvCacheType?: KvCacheType;
  embeddings?: boolean;
  pooling?: Pooling;
  /** One KV buffer shared by all sequences (each may then use the whole context). Default: false. */
  unifiedKv?: boolean;
  /**
   * Recurrent-state snapshots kept per sequence so that the last decode's trailing tokens (at most this
   * many) can be removed again (llama.cpp's n_rs_seq; speculative decoding on hybrid models). Default: 0.
   */
  recurrentRollback?: number;
  /**
   * Worker threads that stay between decodes (a threadpool, as llama.cpp's tools attach). false: ggml
   * starts and joins them in every graph, for comparison only (scripts/bench/threadpool.ts). Default: true.
   */
  persistentThreads?: boolean;
  /**
   * Shares that context's worker threads: for a context whose decodes run on the same thread as that
   * one's, one after the other (a draft model's beside its target). Default: a pool of its own.
   */
  threadsOf?: LlamaContext;
}

/** llama_state_seq flag: only the recurrent (or SWA) part of a sequence's memory. */
const STATE_SEQ_PARTIAL_ONLY = 1;

const ggmlTypes: Record<KvCacheType, number> = { f32: 0, f16: 1, q4_0: 2, q8_0: 8 };
const flashAttentionTypes: Record<FlashAttention, number> = { auto: -1, off: 0, on: 1 };
const poolingTypes: Record<Pooling, number> = { unspecified: -1, none: 0, mean: 1, cls: 2, last: 3, rank: 4 };

export const DecodeStatus = { ok: 0, noSpace: 1, aborted: 2 } as const;

export interface ContextPerf { promptMs: number; evalMs: number; promptTokens: number; evalTokens: number }

export class LlamaContext extends NativeHandle {
  private readonly memory: Pointer;
  readonly contextSize: number;
  readonly contextPerSequence: number;
  readonly batchSize: number;
  readonly sequences: number;
  /** One KV buffer for all sequences (else a stream of contextPerSequence cells each). */
  readonly unifiedKv: boolean;
  /** How many trailing tokens of the last decode a recurrent memory can remove (0: none, or not recurrent). */
  readonly recurrentRollback: number;

  private constructor(
    private readonly n: Native,
    pointer: Pointer,
    readonly model: LlamaModel,
    unifiedKv: boolean,
    private readonly threadpool: CpuThreadpool | null,
  ) {
    super(pointer, "context");
    this.unifiedKv = unifiedKv;
    this.memory = asPointer(n.llama.llama_get_memory(pointer))!;
    this.contextSize = n.llama.llama_n_ctx(pointer);
    this.contextPerSequence = n.llama.llama_n_ctx_seq(pointer);
    this.batchSize = n.llama.llama_n_batch(pointer);
    this.sequences = n.llama.llama_n_seq_max(pointer);
    this.recurrentRollback = n.llama.llama_n_rs_seq(pointer);
  }

  static create(model: LlamaModel, options: ContextOptions): LlamaContext {
    const n = loadNative();
    // n_ctx is a uint32_t: a larger count would wrap to a small context without a word
    if (!Number.isInteger(options.contextSize) || options.contextSize < 0 || options.contextSize > 0xffff_ffff) {
      throw new RangeError(`Cannot create a context of ${options.contextSize} tokens for "${model.path}": at most ${0xffff_ffff}`);
    }
    const p = new StructBuffer(contextParamsLayout);
    n.shim.llamux_context_default_params(p.pointer);
    p.set("n_ctx", options.contextSize);
    p.set("n_batch", options.batchSize);
    p.set("n_ubatch", options.microBatchSize ?? Math.min(options.batchSize, 512));
    p.set("n_seq_max", options.sequences ?? 1);
    p.set("n_threads", options.threads);
    p.set("n_threads_batch", options.threadsBatch ?? options.threads);
    p.set("flash_attn_type", flashAttentionTypes[options.flashAttention ?? "auto"]);
    const kvType = ggmlTypes[options.kvCacheType ?? "f16"];
    p.set("type_k", kvType);
    p.set("type_v", kvType);
    p.set("embeddings", options.embeddings ?? false);
    p.set("pooling_type", poolingTypes[options.pooling ?? "unspecified"]);
    p.set("kv_unified", options.unifiedKv ?? false);
    p.set("n_rs_seq", options.recurrentRollback ?? 0);
    p.set("no_perf", false);
    const { result: pointer, error } = withLlamaError(() => asPointer(n.shim.llamux_context_init(model.pointer, p.pointer)));
    if (!pointer) {
      throw new Error(`Cannot create a context of ${options.contextSize} tokens for "${model.path}": ${error ?? "llama.cpp refused (out of memory?)"}`);
    }
    const threadpool = options.persistentThreads === false ? null
      : options.threadsOf?.threadpool?.share() ?? CpuThreadpool.create(Math.max(options.threads, options.threadsBatch ?? options.threads));
    if (threadpool) n.llama.llama_attach_threadpool(pointer, threadpool.pointer, null);
    return new LlamaContext(n, pointer, model, options.unifiedKv ?? false, threadpool);
  }

  protected free(pointer: Pointer): void {
    this.n.llama.llama_free(pointer);
    // after the context: its last computation may still use the pool
    this.threadpool?.release();
  }

  get pointer(): Pointer {
    return this.handle;
  }

  /** Threads for the next decodes: single-token (decode) batches and prompt batches alike. */
  setThreads(threads: number): void {
    this.n.llama.llama_set_n_threads(this.handle, threads, threads);
  }

  /** Runs the model over the batch. Returns 0 on success, 1 when the cache has no room, other values on errors. */
  decode(batch: TokenBatch): number {
    return this.n.shim.llamux_decode(this.handle, batch.pointer);
  }

  encode(batch: TokenBatch): number {
    return this.n.shim.llamux_encode(this.handle, batch.pointer);
  }

  /** Drops positions [from, to) of a sequence (to = -1: to the end). False if the memory cannot do it (recurrent). */
  removeTokens(seq: number, from: number, to = -1): boolean {
    return this.n.llama.llama_memory_seq_rm(this.memory, seq, from, to);
  }

  clearSequence(seq: number): void {
    this.n.llama.llama_memory_seq_rm(this.memory, seq, -1, -1);
  }

  /**
   * Tags `from`'s cells in [p0, p1) with `to` too: in a unified cache they are then shared. Across streams
   * llama.cpp copies whole streams only (a range aborts) and only at the next decode.
   */
  copySequence(from: number, to: number, p0 = -1, p1 = -1): void {
    this.n.llama.llama_memory_seq_cp(this.memory, from, to, p0, p1);
  }

  /** Highest position stored for the sequence, -1 when empty. */
  lastPosition(seq: number): number {
    return this.n.llama.llama_memory_seq_pos_max(this.memory, seq);
  }

  clearAll(): void {
    this.n.llama.llama_memory_clear(this.memory, true);
  }

  /** Serialises one sequence's cache/state (for checkpoints of models that cannot roll back). */
  saveSequence(seq: number): Uint8Array {
    const size = Number(this.n.llama.llama_state_seq_get_size(this.handle, seq));
    const out = new Uint8Array(Math.max(size, 1));
    const written = Number(this.n.llama.llama_state_seq_get_data(this.handle, ptr(out), size, seq));
    return out.subarray(0, written);
  }

  restoreSequence(seq: number, state: Uint8Array): boolean {
    if (state.length === 0) return false;
    return Number(this.n.llama.llama_state_seq_set_data(this.handle, ptr(state), state.length, seq)) > 0;
  }

  /** Saves only the recurrent part of a sequence's memory (small: no KV cache), for a quick rollback. */
  saveRecurrentState(seq: number): Uint8Array {
    const size = Number(this.n.llama.llama_state_seq_get_size_ext(this.handle, seq, STATE_SEQ_PARTIAL_ONLY));
    const out = new Uint8Array(Math.max(size, 1));
    const written = Number(this.n.llama.llama_state_seq_get_data_ext(this.handle, ptr(out), size, seq, STATE_SEQ_PARTIAL_ONLY));
    return out.subarray(0, written);
  }

  restoreRecurrentState(seq: number, state: Uint8Array): boolean {
    if (state.length === 0) return false;
    return Number(this.n.llama.llama_state_seq_set_data_ext(this.handle, ptr(state), state.length, seq, STATE_SEQ_PARTIAL_ONLY)) > 0;
  }

  /** Where the hidden state (embedding) of batch index `index` of the last decode is: valid only until the next decode. */
  embeddingsPointer(index: number): Pointer {
    const p = asPointer(this.n.llama.llama_get_embeddings_ith(this.handle, index));
    if (!p) throw new RangeError(`Cannot read the hidden state at batch index ${index}: the context keeps no embeddings for it`);
    return p;
  }

  /** The logits at batch index `index` without copying them: valid only until the next decode. */
  logitsView(index: number): Float32Array {
    const p = asPointer(this.n.llama.llama_get_logits_ith(this.handle, index));
    if (!p) throw new RangeError(`Cannot read logits at batch index ${index}: that token did not request output`);
    return new Float32Array(toArrayBuffer(p, 0, this.model.vocab.size * 4));
  }

  /** The vocabulary-sized logits of the token at batch index `index` of the last decode (a copy). */
  logits(index: number): Float32Array {
    const p = asPointer(this.n.llama.llama_get_logits_ith(this.handle, index));
    if (!p) throw new RangeError(`Cannot read logits at batch index ${index}: that token did not request output`);
    return new Float32Array(toArrayBuffer(p, 0, this.model.vocab.size * 4).slice(0));
  }

  /** The pooling the context applies (the model's own unless the context was created with another): 4 is rank. */
  get poolingType(): Pooling {
    const type = this.n.llama.llama_pooling_type(this.handle);
    return (Object.keys(poolingTypes) as Pooling[]).find((name) => poolingTypes[name] === type) ?? "unspecified";
  }

  /** A reranker's scores for a sequence after decode (rank pooling): one per classifier output. */
  sequenceScores(seq: number): Float32Array | undefined {
    const p = asPointer(this.n.llama.llama_get_embeddings_seq(this.handle, seq));
    if (!p) return undefined;
    const outputs = this.n.llama.llama_model_n_cls_out(this.model.pointer);
    return new Float32Array(toArrayBuffer(p, 0, Math.max(1, outputs) * 4).slice(0));
  }

  /** Pooled embedding of a sequence after decode (context created with embeddings). */
  sequenceEmbedding(seq: number): Float32Array | undefined {
    const p = asPointer(this.n.llama.llama_get_embeddings_seq(this.handle, seq));
    if (!p) return undefined;
    return new Float32Array(toArrayBuffer(p, 0, this.model.embeddingSize * 4).slice(0));
  }

  perf(): ContextPerf {
    const s = new StructBuffer(perfContextLayout);
    this.n.shim.llamux_perf_context(this.handle, s.pointer);
    return { promptMs: s.get("t_p_eval_ms"), evalMs: s.get("t_eval_ms"), promptTokens: s.get("n_p_eval"), evalTokens: s.get("n_eval") };
  }
}
