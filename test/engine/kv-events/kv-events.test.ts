// KV-cache events in vLLM's format, checked from outside: a libzmq subscriber (the `zeromq` package, run
// by Node) receives what llamux's publisher sends for synthetic scheduler notifications, the batches are
// decoded with @msgpack/msgpack, and the set of cached prefixes rebuilt from the events alone must equal
// the prefixes the notifications left held. Block hashes are checked against vectors computed with
// Python's cbor2 and hashlib for vLLM's sha256_cbor.
import { afterEach, describe, expect, test } from "bun:test";
import { decode } from "@msgpack/msgpack";
import { join } from "node:path";
import { blockHash, blockHashInput, externalBlockHash, noneHash } from "../../../src/engine/kv-events/block-hash.ts";
import { KvCacheEvents } from "../../../src/engine/kv-events/kv-cache-events.ts";
import { parseKvEventsConfig } from "../../../src/engine/kv-events/kv-events-config.ts";
import { encodeMsgpack } from "../../../src/engine/kv-events/msgpack.ts";
import { type KvEventPublisher, openKvEventPublisher } from "../../../src/engine/kv-events/publisher.ts";
import { parseZmqEndpoint } from "../../../src/engine/kv-events/zmtp-publisher.ts";
import { freePort } from "../../server/serve-fixture.ts";

const root = join(import.meta.dir, "..", "..", "..");
const hexBytes = (hex: string) => Uint8Array.from(Buffer.from(hex, "hex"));
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("vLLM's sha256_cbor block hashes", () => {
  // Vectors from loxilb-io/loxilb-inference-gateway cicd/common/kv_hash/fixtures/kv_hash_vectors.json,
  // made with cbor2.dumps(..., canonical=True) and hashlib.sha256 by vLLM v0.17.0's hashing code.
  const seedZeroRoot = "4e1195df020de59e0d65a33a4279f1183e7ae4e5d980e309f8b55adff2e61c3e";
  const block0 = [101, 202, 303, 404, 505, 606, 707, 808, 909, 1010, 1111, 1212, 1313, 1414, 1515, 1616];
  const block1 = [1717, 1818, 1919, 2020, 2121, 2222, 2323, 2424, 2525, 2626, 2727, 2828, 2929, 3030, 3131, 3232];

  test("NONE_HASH for PYTHONHASHSEED=0 is sha256 of the CBOR string \"0\"", () => {
    expect(toHex(noneHash("0"))).toBe(seedZeroRoot);
  });

  test("the CBOR input and the chained digests match Python's", () => {
    expect(toHex(blockHashInput(new Uint8Array(32), block0))).toBe(
      "835820000000000000000000000000000000000000000000000000000000000000000090186518ca19012f1901941901f919025e1902c319032819038d1903f21904571904bc1905211905861905eb190650f6");
    const first = blockHash(hexBytes(seedZeroRoot), block0);
    expect(toHex(first)).toBe("d450abdaf2c9ebdd0e0cbfbc4e24a5c07ff71dcab37be7426d4fa0e5fdb93342");
    expect(externalBlockHash(first)).toBe(7876691182959014722n);
    const second = blockHash(first, block1);
    expect(toHex(second)).toBe("0d95d2dc02f528b32afbd33ebffedd911ed1978087b0a01679b4ddd62261c5db");
    expect(externalBlockHash(second)).toBe(8769878286166771163n);
  });
});

describe("the msgpack encoder", () => {
  test("round-trips through @msgpack/msgpack, 64-bit unsigned hashes included", () => {
    const value = {
      small: 5, negative: -33, wide: 70_000, unsigned64: 18_446_744_073_709_551_615n, float: 1.5, nil: null, yes: true,
      text: "é".repeat(200), list: Array.from({ length: 300 }, (_, i) => i * 1000), nested: [{ a: [] }],
    };
    const decoded = decode(encodeMsgpack(value), { useBigInt64: true }) as Record<string, unknown>;
    expect(decoded).toEqual({ ...value, unsigned64: 18_446_744_073_709_551_615n, wide: 70_000 });
  });
});

describe("--kv-events-config", () => {
  test("reads vLLM's fields; events are off unless enabled", () => {
    expect(parseKvEventsConfig('{"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:5557", "topic": "kv@pod"}'))
      .toEqual({ endpoint: "tcp://*:5557", topic: "kv@pod" });
    expect(parseKvEventsConfig('{"enable_kv_cache_events": true}')).toEqual({ endpoint: "tcp://*:5557", topic: "" });
    expect(parseKvEventsConfig('{"publisher": "zmq"}')).toBeUndefined();
    expect(parseKvEventsConfig('{"enable_kv_cache_events": true, "publisher": "null"}')).toBeUndefined();
  });

  test("refuses what it cannot honour, with the field named", () => {
    expect(() => parseKvEventsConfig("{")).toThrow(/must be a JSON object/);
    expect(() => parseKvEventsConfig('{"enable_kv_cache_events": "yes"}')).toThrow(/"enable_kv_cache_events" must be a boolean/);
    expect(() => parseKvEventsConfig('{"enable_kv_cache_events": true, "publisher": "kafka"}')).toThrow(/"zmq" or "null"/);
    expect(() => parseKvEventsConfig('{"enable_kv_cache_events": true, "replay_endpoint": "tcp://*:5558"}')).toThrow(/replay_endpoint is not supported/);
    expect(() => parseKvEventsConfig('{"enable_kv_cache_events": true, "endpoint": "udp://x:1"}')).toThrow(/endpoint/);
    expect(() => parseKvEventsConfig('{"enable_kv_cache_events": true, "endpont": "tcp://*:1"}')).toThrow(/unknown field "endpont"/);
  });

  test("binds or connects as vLLM decides", () => {
    expect(parseZmqEndpoint("tcp://*:5557")).toEqual({ transport: "tcp", host: "0.0.0.0", port: 5557, bind: true });
    expect(parseZmqEndpoint("tcp://[::]:5557")).toEqual({ transport: "tcp", host: "::", port: 5557, bind: true });
    expect(parseZmqEndpoint("tcp://indexer.svc:5557")).toEqual({ transport: "tcp", host: "indexer.svc", port: 5557, bind: false });
    expect(parseZmqEndpoint("ipc:///tmp/kv.sock")).toEqual({ transport: "ipc", path: "/tmp/kv.sock", bind: true });
  });
});

/** A libzmq subscriber in a Node process; its messages arrive as arrays of frames. */
class Subscriber {
  readonly messages: Uint8Array[][] = [];
  private lines = "";
  private readonly child: ReturnType<typeof Bun.spawn>;
  readonly ready: Promise<string>;

  constructor(mode: "connect" | "bind", endpoint: string, topic: string) {
    const child = Bun.spawn([join(root, "node_modules", ".bin", "node"), join(root, "test", "fixtures", "zmq-subscriber.mjs"), mode, endpoint, topic], {
      stdin: "pipe", stdout: "pipe", stderr: "inherit",
    });
    this.child = child;
    let resolveReady!: (line: string) => void;
    this.ready = new Promise((resolve) => (resolveReady = resolve));
    void (async () => {
      for await (const chunk of child.stdout) {
        this.lines += new TextDecoder().decode(chunk);
        let newline;
        while ((newline = this.lines.indexOf("\n")) >= 0) {
          const line = this.lines.slice(0, newline);
          this.lines = this.lines.slice(newline + 1);
          if (line.startsWith("ready")) resolveReady(line);
          else this.messages.push((JSON.parse(line) as string[]).map((frame) => Uint8Array.from(Buffer.from(frame, "base64"))));
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.child.kill();
    await this.child.exited;
  }
}

type Batch = [number, Array<Record<string, unknown>>, number];

/** What a prefix router keeps: each stored block's parent and tokens, by hash; prefixes follow the parents. */
class PrefixIndex {
  private readonly blocks = new Map<bigint, { parent: bigint | null; tokens: number[] }>();

  apply(batch: Batch): void {
    for (const event of batch[1]) {
      if (event.type === "AllBlocksCleared") this.blocks.clear();
      else if (event.type === "BlockRemoved") for (const hash of event.block_hashes as bigint[]) this.blocks.delete(hash);
      else if (event.type === "BlockStored") {
        let parent = (event.parent_block_hash ?? null) as bigint | null;
        const tokens = event.token_ids as number[];
        (event.block_hashes as bigint[]).forEach((hash, i) => {
          this.blocks.set(hash, { parent, tokens: tokens.slice(i * 16, i * 16 + 16) });
          parent = hash;
        });
      }
    }
  }

  /** Every cached prefix, as its tokens joined; a block whose parent is gone makes no prefix. */
  prefixes(): string[] {
    const found: string[] = [];
    for (const hash of this.blocks.keys()) {
      const chain: number[][] = [];
      let at: bigint | null = hash;
      while (at !== null) {
        const block = this.blocks.get(at);
        if (!block) break;
        chain.unshift(block.tokens);
        at = block.parent;
      }
      if (at === null) found.push(chain.flat().join(","));
    }
    return found.sort();
  }
}

/** The prefixes sequences hold, in whole 16-token blocks, as the index should rebuild them. */
function heldPrefixes(sequences: Map<number, number[]>): string[] {
  const found = new Set<string>();
  for (const tokens of sequences.values()) {
    for (let end = 16; end <= tokens.length; end += 16) found.add(tokens.slice(0, end).join(","));
  }
  return [...found].sort();
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

describe("KV-cache events to a ZeroMQ subscriber", () => {
  let publisher: KvEventPublisher | undefined;
  let subscriber: Subscriber | undefined;
  afterEach(async () => {
    publisher?.close();
    await subscriber?.stop();
    publisher = subscriber = undefined;
  });

  /** Publishes clears until the subscriber hears one (ZeroMQ's subscriptions take a moment to arrive). */
  async function joined(sub: Subscriber, pub: KvEventPublisher): Promise<void> {
    await until(() => {
      if (sub.messages.length > 0) return true;
      pub.events.allCleared();
      pub.events.flush();
      return false;
    }, "the subscriber to join");
    await Bun.sleep(50);
    sub.messages.length = 0;
  }

  test("the subscriber rebuilds exactly the prefixes the sequences hold, batch by batch", async () => {
    publisher = await openKvEventPublisher({ endpoint: "tcp://*:0", topic: "kv@llamux" }, "0");
    subscriber = new Subscriber("connect", `tcp://127.0.0.1:${publisher.port}`, "kv@");
    await subscriber.ready;
    await joined(subscriber, publisher);

    const index = new PrefixIndex();
    const held = new Map<number, number[]>();
    let received = 0;
    const step = async (change: () => void) => {
      change();
      publisher!.events.flush();
      received++;
      await until(() => subscriber!.messages.length >= received, "the batch");
      const [topic, number, payload] = subscriber!.messages[received - 1]!;
      expect(new TextDecoder().decode(topic)).toBe("kv@llamux");
      expect(number!.length).toBe(8);
      const batch = decode(payload!, { useBigInt64: true }) as Batch;
      expect(batch).toHaveLength(3);
      expect(typeof batch[0]).toBe("number");
      expect(batch[2]).toBe(0);
      index.apply(batch);
      expect(index.prefixes()).toEqual(heldPrefixes(held));
      return batch[1];
    };
    const cache = (seq: number, tokens: number[]) => {
      held.set(seq, tokens);
      publisher!.events.sequenceCached(seq, tokens);
    };
    const drop = (seq: number, from: number) => {
      held.set(seq, (held.get(seq) ?? []).slice(0, from));
      publisher!.events.sequenceDropped(seq, from);
    };

    const shared = range(1000, 40); // two full blocks and 8 tokens
    let events = await step(() => cache(0, shared));
    expect(events).toEqual([{
      type: "BlockStored", block_hashes: [expect.any(BigInt), expect.any(BigInt)], parent_block_hash: null,
      token_ids: shared.slice(0, 32), block_size: 16, lora_id: null, medium: "GPU", lora_name: null,
      extra_keys: [null, null], group_idx: 0, kv_cache_spec_kind: "full_attention",
    }]);
    expect(Object.keys(events[0]!)).toEqual(["type", "block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id", "medium",
      "lora_name", "extra_keys", "group_idx", "kv_cache_spec_kind"]);
    const [firstHash, secondHash] = events[0]!.block_hashes as bigint[];
    expect(firstHash).toBe(externalBlockHash(blockHash(noneHash("0"), shared.slice(0, 16))));

    // A second sequence with the same first 32 tokens: only its own third block is new, chained to the shared one.
    events = await step(() => cache(1, [...shared.slice(0, 32), ...range(5000, 20)]));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "BlockStored", parent_block_hash: secondHash, token_ids: range(5000, 16) });

    // The first sequence grows by decoding: blocks complete one after another.
    await step(() => cache(0, [...shared, ...range(2000, 40)]));
    // The second sequence is cut back into its second block: the first block stays, the shared second one
    // stays because sequence 0 holds it, its own third block goes.
    events = await step(() => drop(1, 20));
    expect(events).toEqual([{ type: "BlockRemoved", block_hashes: [expect.any(BigInt)], medium: "GPU", group_idx: 0 }]);
    // Sequence 0 is handed a different prompt: everything past the first block is replaced.
    await step(() => cache(0, [...shared.slice(0, 16), ...range(9000, 33)]));
    await step(() => drop(0, 0));
    await step(() => drop(1, 0));
    expect(index.prefixes()).toEqual([]);
    await step(() => cache(2, range(1, 64)));
    events = await step(() => {
      held.clear();
      publisher!.events.allCleared();
    });
    expect(events).toEqual([{ type: "AllBlocksCleared" }]);
  }, 60_000);

  test("a publisher whose endpoint names a host connects to a subscriber that binds, and ignores other topics", async () => {
    const port = await freePort();
    subscriber = new Subscriber("bind", `tcp://127.0.0.1:${port}`, "wanted");
    await subscriber.ready;
    publisher = await openKvEventPublisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: "wanted" }, "0");
    await joined(subscriber, publisher);
    publisher.events.sequenceCached(7, range(0, 16));
    publisher.events.flush();
    await until(() => subscriber!.messages.length === 1, "the batch");
    const batch = decode(subscriber.messages[0]![2]!, { useBigInt64: true }) as Batch;
    expect(batch[1][0]).toMatchObject({ type: "BlockStored", token_ids: range(0, 16) });

    const other = await openKvEventPublisher({ endpoint: `tcp://127.0.0.1:${port}`, topic: "other" }, "0");
    try {
      await Bun.sleep(300); // connected and told the subscription by now
      other.events.sequenceCached(1, range(0, 32));
      other.events.flush();
      publisher.events.sequenceDropped(7, 0);
      publisher.events.flush();
      await until(() => subscriber!.messages.length === 2, "the second batch");
      await Bun.sleep(100);
      expect(subscriber.messages).toHaveLength(2);
      expect(new TextDecoder().decode(subscriber.messages[1]![0])).toBe("wanted");
    } finally {
      other.close();
    }
  }, 60_000);
});

describe("blocks computed under a per-request LoRA adapter", () => {
  test("hash the adapter's name in and name the adapter, as vLLM's do; the same tokens of the base model are other blocks", () => {
    const batches: unknown[][] = [];
    const events = new KvCacheEvents((payload) => batches.push((decode(payload, { useBigInt64: true }) as unknown[])[1] as unknown[]), "0", () => 0);
    const tokens = range(100, 16);
    const sql = { id: 3, name: "sql" };
    events.sequenceCached(0, tokens);
    events.sequenceCached(1, tokens, sql);
    events.flush();
    const root = noneHash("0");
    // the extra keys (lora_name,) close the CBOR triple instead of None
    expect(toHex(blockHashInput(root, tokens, ["sql"])).endsWith("816373716c")).toBe(true);
    expect(batches).toEqual([[
      expect.objectContaining({ block_hashes: [externalBlockHash(blockHash(root, tokens))], lora_id: null, lora_name: null, extra_keys: [null] }),
      expect.objectContaining({ block_hashes: [externalBlockHash(blockHash(root, tokens, ["sql"]))], lora_id: 3, lora_name: "sql", extra_keys: [["sql"]] }),
    ]]);
    // the adapter's sequence is handed to the base model with the same tokens: its adapter's block goes, the base model's is held already
    events.sequenceCached(1, tokens);
    events.flush();
    expect(batches[1]).toEqual([{ type: "BlockRemoved", block_hashes: [externalBlockHash(blockHash(root, tokens, ["sql"]))], medium: "GPU", group_idx: 0 }]);
  });
});
