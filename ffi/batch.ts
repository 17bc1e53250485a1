// A llama_batch whose arrays live in JS-owned typed arrays: filling it is plain array writes, with
// no native call per token. Every token belongs to exactly one sequence, which is all the engine needs.
import { ptr, type Pointer } from "bun:ffi";
import { StructBuffer, batchLayout } from "./layouts.ts";

export class TokenBatch {
  private readonly tokens: Int32Array;
  private readonly positions: Int32Array;
  private readonly seqIdCounts: Int32Array;
  private readonly seqIds: Int32Array;
  private readonly seqIdPointers: BigUint64Array;
  private readonly outputs: Int8Array;
  private readonly struct = new StructBuffer(batchLayout);
  count = 0;

  constructor(readonly capacity: number) {
    this.tokens = new Int32Array(capacity);
    this.positions = new Int32Array(capacity);
    this.seqIdCounts = new Int32Array(capacity).fill(1);
    this.seqIds = new Int32Array(capacity);
    this.seqIdPointers = new BigUint64Array(capacity);
    this.outputs = new Int8Array(capacity);
    const seqIdsBase = BigInt(ptr(this.seqIds));
    for (let i = 0; i < capacity; i++) this.seqIdPointers[i] = seqIdsBase + BigInt(4 * i);
    this.struct.set("token", ptr(this.tokens));
    this.struct.set("embd", 0);
    this.struct.set("pos", ptr(this.positions));
    this.struct.set("n_seq_id", ptr(this.seqIdCounts));
    this.struct.set("seq_id", ptr(this.seqIdPointers));
    this.struct.set("logits", ptr(this.outputs));
  }

  get free(): number {
    return this.capacity - this.count;
  }

  /** Adds one token; returns its index in the batch (the index to read logits or sample at). */
  add(token: number, position: number, seq: number, wantOutput: boolean): number {
    if (this.count >= this.capacity) throw new RangeError(`Cannot add token: batch is full (${this.capacity})`);
    const i = this.count++;
    this.tokens[i] = token;
    this.positions[i] = position;
    this.seqIds[i] = seq;
    this.outputs[i] = wantOutput ? 1 : 0;
    return i;
  }

  clear(): void {
    this.count = 0;
  }

  /** Pointer to the llama_batch struct, with n_tokens set to the current count. */
  get pointer(): Pointer {
    this.struct.set("n_tokens", this.count);
    return this.struct.pointer;
  }
}
