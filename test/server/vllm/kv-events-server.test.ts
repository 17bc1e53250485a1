// KV-cache events from a real server (profile b, --kv-events-config) to a libzmq subscriber: the set of
// cached prefixes a router rebuilds from the events alone predicts what later requests find cached.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decode } from "@msgpack/msgpack";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { freePort, startServer, type RunningServer } from "../serve-fixture.ts";

const root = join(import.meta.dir, "..", "..", "..");
type Batch = [number, Array<Record<string, unknown>>, number];

/** The prefix index a router keeps: block hash → parent and tokens. */
const blocks = new Map<bigint, { parent: bigint | null; tokens: number[] }>();
function apply(batch: Batch): void {
  for (const event of batch[1]) {
    if (event.type === "AllBlocksCleared") blocks.clear();
    else if (event.type === "BlockRemoved") for (const hash of event.block_hashes as bigint[]) blocks.delete(hash);
    else if (event.type === "BlockStored") {
      let parent = (event.parent_block_hash ?? null) as bigint | null;
      const tokens = event.token_ids as number[];
      (event.block_hashes as bigint[]).forEach((hash, i) => {
        blocks.set(hash, { parent, tokens: tokens.slice(i * 16, i * 16 + 16) });
        parent = hash;
      });
    }
  }
}

/** The longest cached prefix of `prompt` the index knows, in tokens (whole blocks). */
function predictedCached(prompt: number[]): number {
  let longest = 0;
  for (const hash of blocks.keys()) {
    const chain: number[][] = [];
    let at: bigint | null = hash;
    while (at !== null && blocks.has(at)) {
      chain.unshift(blocks.get(at)!.tokens);
      at = blocks.get(at)!.parent;
    }
    if (at !== null) continue;
    const tokens = chain.flat();
    if (tokens.every((t, i) => prompt[i] === t)) longest = Math.max(longest, tokens.length);
  }
  return longest;
}

let server: RunningServer;
let subscriber: ReturnType<typeof Bun.spawn>;
let client: OpenAI;
let model: string;

beforeAll(async () => {
  const port = await freePort();
  model = await ensureModel("tiny-llama");
  // no host or disk cache: what a request finds cached is what the sequences hold, which the events describe
  server = await startServer([model, "--profile", "b", "--max-model-len", "2048", "--parallel", "2", "--cache-ram", "0", "--cache-disk-mib", "0",
    "--kv-events-config", JSON.stringify({ enable_kv_cache_events: true, publisher: "zmq", endpoint: `tcp://*:${port}`, topic: "kv@test" })]);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "none" });
  // the engine loads (and binds the publisher) with the first request
  await client.completions.create({ model, prompt: [1, 2, 3], max_tokens: 1 });
  subscriber = Bun.spawn([join(root, "node_modules", ".bin", "node"), join(root, "test", "fixtures", "zmq-subscriber.mjs"), "connect", `tcp://127.0.0.1:${port}`, "kv@"], {
    stdin: "pipe", stdout: "pipe", stderr: "inherit",
  });
  void (async () => {
    let lines = "";
    for await (const chunk of subscriber.stdout as ReadableStream<Uint8Array>) {
      lines += new TextDecoder().decode(chunk);
      let newline;
      while ((newline = lines.indexOf("\n")) >= 0) {
        const line = lines.slice(0, newline);
        lines = lines.slice(newline + 1);
        if (line.startsWith("ready")) continue;
        const frames = (JSON.parse(line) as string[]).map((frame) => Uint8Array.from(Buffer.from(frame, "base64")));
        apply(decode(frames[2]!, { useBigInt64: true }) as Batch);
      }
    }
  })();
}, 120_000);
afterAll(async () => {
  subscriber?.kill();
  await server?.stop();
});

const tokens = (from: number, count: number) => Array.from({ length: count }, (_, i) => 100 + ((from + i * 7) % 900));

test("the prefixes rebuilt from the events predict the cached tokens of later requests", async () => {
  // ZeroMQ subscriptions take a moment: prompts of their own until events arrive, then one more per
  // sequence, so that every sequence's memory was described after the subscriber joined
  for (let i = 0; i < 50 && blocks.size === 0; i++) {
    await client.completions.create({ model, prompt: tokens(20_000 + i * 1000, 64), max_tokens: 1 });
    await Bun.sleep(100);
  }
  expect(blocks.size).toBeGreaterThan(0);
  for (const probe of [tokens(90_000, 64), tokens(91_000, 64)]) await client.completions.create({ model, prompt: probe, max_tokens: 1 });
  const first = tokens(0, 200);
  await client.completions.create({ model, prompt: first, max_tokens: 1 });
  const second = tokens(5000, 300);
  await client.completions.create({ model, prompt: second, max_tokens: 2 });
  await Bun.sleep(300);
  for (const [shared, rest] of [[first, tokens(9000, 40)], [second.slice(0, 250), tokens(7000, 30)], [tokens(3000, 100), []]] as const) {
    const prompt = [...shared, ...rest];
    const predicted = predictedCached(prompt);
    const answer = await client.completions.create({ model, prompt, max_tokens: 1 });
    const cached = answer.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    // the engine reuses a prefix to the token; the events speak in whole 16-token blocks
    expect(cached).toBeGreaterThanOrEqual(predicted);
    expect(cached).toBeLessThan(predicted + 16);
    // a prompt that shares a prefix with a sequence's memory is predicted from the events, not by chance
    if (shared.length >= 200) expect(predicted).toBeGreaterThanOrEqual(192);
    await Bun.sleep(300);
  }
}, 120_000);
