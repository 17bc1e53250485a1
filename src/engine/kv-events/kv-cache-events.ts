// Turns what the scheduler knows about its sequences ("sequence S now holds tokens T[0..n)", "sequence S
// dropped everything from position k", "all memory cleared") into vLLM's KV-cache events: BlockStored when
// a 16-token block's content becomes held by some sequence, BlockRemoved when the last sequence holding it
// lets go, AllBlocksCleared. A prefix router rebuilds from them the set of prefixes this engine holds.
//
// Blocks are keyed by their chained hash (content and everything before it), so a prefix two sequences
// hold is stored once and removed when neither holds it, as vLLM's shared prefix blocks are. Events of
// one engine step go out together as one batch on the next flush. Blocks computed under a per-request
// LoRA adapter hash its name in and name it (lora_id, lora_name), as vLLM's do: they serve only that
// adapter's prompts.
import { KV_BLOCK_TOKENS } from "../kv-blocks.ts";
import { blockHash, externalBlockHash, noneHash } from "./block-hash.ts";
import { encodeMsgpack, type MsgpackValue } from "./msgpack.ts";

/** The scheduler's side: what it reports, when. */
export interface KvCacheNotifications {
  /**
   * Sequence `seq` now holds `tokens` in its memory (all of them, from position 0; only full blocks count),
   * computed under `lora` (none: the base model).
   */
  sequenceCached(seq: number, tokens: ArrayLike<number>, lora?: KvLora): void;
  /** Sequence `seq` dropped its memory from position `from` on (0: all of it). */
  sequenceDropped(seq: number, from: number): void;
  /** Every sequence's memory was cleared at once. */
  allCleared(): void;
  /** Publishes the events since the last flush as one batch (once per engine step). */
  flush(): void;
}

/** Sends one encoded batch; the ZeroMQ publisher frames it with the topic and a sequence number. */
export type BatchSink = (payload: Uint8Array) => void;

/** A per-request LoRA adapter: its id within the engine (one per load) and its name. */
export interface KvLora {
  readonly id: number;
  readonly name: string;
}

interface HeldBlock {
  digest: Uint8Array;
  tokens: number[];
  lora: KvLora | undefined;
}

/** vLLM names the engine's own KV cache "GPU" whatever the device; llamux's cells are that tier. */
const MEDIUM = "GPU";

export class KvCacheEvents implements KvCacheNotifications {
  private readonly root: Uint8Array;
  /** Each sequence's chain of full blocks, first block first. */
  private readonly chains = new Map<number, HeldBlock[]>();
  /** How many sequences hold each block, by the hex of its digest. */
  private readonly holders = new Map<string, number>();
  private events: MsgpackValue[] = [];
  private flushScheduled = false;

  constructor(private readonly sink: BatchSink, seed: string, private readonly now: () => number = () => Date.now() / 1000) {
    this.root = noneHash(seed);
  }

  sequenceCached(seq: number, tokens: ArrayLike<number>, lora?: KvLora): void {
    const chain = this.chains.get(seq) ?? [];
    const full = Math.floor(tokens.length / KV_BLOCK_TOKENS);
    let same = 0;
    // a chain is computed under one adapter: under another, none of its blocks holds
    if (chain[0]?.lora?.id === lora?.id) {
      while (same < Math.min(chain.length, full) && sameTokens(chain[same]!.tokens, tokens, same * KV_BLOCK_TOKENS)) same++;
    }
    this.release(chain.splice(same));
    const stored: HeldBlock[] = [];
    for (let i = same; i < full; i++) {
      const blockTokens = Array.from({ length: KV_BLOCK_TOKENS }, (_, j) => tokens[i * KV_BLOCK_TOKENS + j]!);
      const parent = chain.at(-1)?.digest ?? this.root;
      const block = { digest: blockHash(parent, blockTokens, lora && [lora.name]), tokens: blockTokens, lora };
      chain.push(block);
      if (this.hold(block)) stored.push(block);
    }
    this.chains.set(seq, chain);
    if (stored.length) this.storedEvent(chain, stored);
  }

  sequenceDropped(seq: number, from: number): void {
    const chain = this.chains.get(seq);
    if (!chain) return;
    // a block survives only if all of its tokens stay
    this.release(chain.splice(Math.floor(Math.max(0, from) / KV_BLOCK_TOKENS)));
    if (chain.length === 0) this.chains.delete(seq);
  }

  allCleared(): void {
    this.chains.clear();
    this.holders.clear();
    this.events.push({ type: "AllBlocksCleared" });
    this.scheduleFlush();
  }

  flush(): void {
    this.flushScheduled = false;
    if (this.events.length === 0) return;
    const events = this.events;
    this.events = [];
    // EventBatch (array-like): ts, events, data_parallel_rank
    this.sink(encodeMsgpack([this.now(), events, 0]));
  }

  /** Counts a holder; true when the block was held by none before. */
  private hold(block: HeldBlock): boolean {
    const key = hex(block.digest);
    const count = this.holders.get(key) ?? 0;
    this.holders.set(key, count + 1);
    return count === 0;
  }

  private release(blocks: HeldBlock[]): void {
    const removed: bigint[] = [];
    for (const block of blocks) {
      const key = hex(block.digest);
      const count = (this.holders.get(key) ?? 1) - 1;
      if (count > 0) {
        this.holders.set(key, count);
        continue;
      }
      this.holders.delete(key);
      removed.push(externalBlockHash(block.digest));
    }
    if (removed.length === 0) return;
    this.events.push({ type: "BlockRemoved", block_hashes: removed, medium: MEDIUM, group_idx: 0 });
    this.scheduleFlush();
  }

  /** One BlockStored per run of consecutive new blocks, each run naming the block before it as parent. */
  private storedEvent(chain: HeldBlock[], stored: HeldBlock[]): void {
    let run: HeldBlock[] = [];
    const emit = () => {
      if (run.length === 0) return;
      const parentIndex = chain.indexOf(run[0]!) - 1;
      const lora = run[0]!.lora;
      this.events.push({
        type: "BlockStored",
        block_hashes: run.map((block) => externalBlockHash(block.digest)),
        parent_block_hash: parentIndex >= 0 ? externalBlockHash(chain[parentIndex]!.digest) : null,
        token_ids: run.flatMap((block) => block.tokens),
        block_size: KV_BLOCK_TOKENS,
        lora_id: lora?.id ?? null,
        medium: MEDIUM,
        lora_name: lora?.name ?? null,
        extra_keys: run.map(() => (lora ? [lora.name] : null)),
        group_idx: 0,
        kv_cache_spec_kind: "full_attention",
      });
      run = [];
    };
    for (const block of stored) {
      if (run.length && chain.indexOf(block) !== chain.indexOf(run.at(-1)!) + 1) emit();
      run.push(block);
    }
    emit();
    this.scheduleFlush();
  }

  /** A caller that never flushes still publishes, once the current turn of the event loop ends. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      if (this.flushScheduled) this.flush();
    });
  }
}

function sameTokens(block: number[], tokens: ArrayLike<number>, offset: number): boolean {
  for (let i = 0; i < block.length; i++) if (block[i] !== tokens[offset + i]) return false;
  return true;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}
