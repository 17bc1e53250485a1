// Profile b's gauges under real load, the way the Gateway API Inference Extension reads them: a `llamux
// serve` process with 2 sequences gets 6 requests at once, and /metrics is scraped throughout. Every
// scrape must tell the truth at that moment: the two sequences running, the other requests waiting, KV
// usage growing with the running sequences' context and back to nothing once they end, and the prefix
// cache counters adding up to the cached tokens the clients were told about.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { type RunningServer, startServer, waitUntilReady } from "../serve-fixture.ts";
import { sample, samples } from "../../fixtures/prometheus-text.ts";

const MODEL = "tiny";
const SEQUENCES = 2;
const CONTEXT = 4096;
const labels = { model_name: MODEL, engine: "0" };

let server: RunningServer;
let client: OpenAI;

beforeAll(async () => {
  const path = await ensureModel("tiny-llama");
  server = await startServer([path, "--profile", "b", "--served-model-name", MODEL, "--max-num-seqs", String(SEQUENCES), "--max-model-len", String(CONTEXT)]);
  await waitUntilReady(server);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "unused" });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function scrape(): Promise<string> {
  const response = await fetch(`${server.baseUrl}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

interface Usage { prompt: number; cached: number }
const usageOf = (usage: OpenAI.CompletionUsage | null | undefined): Usage =>
  ({ prompt: usage!.prompt_tokens, cached: usage!.prompt_tokens_details?.cached_tokens ?? 0 });

/** A streamed request that generates until its sequence's context is full: it holds a sequence for a long while. */
function longStream(content: string) {
  const state = { chunks: 0, ended: false, usage: undefined as Usage | undefined };
  const done = (async () => {
    const stream = await client.chat.completions.create({
      model: MODEL, messages: [{ role: "user", content }], stream: true, stream_options: { include_usage: true },
      max_tokens: 1024, temperature: 0, ...{ ignore_eos: true },
    });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) state.chunks++;
      if (chunk.usage) state.usage = usageOf(chunk.usage);
    }
    state.ended = true;
  })();
  return { state, done };
}

async function shortRequest(content: string): Promise<Usage> {
  const reply = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content }], max_tokens: 4, temperature: 0 });
  return usageOf(reply.usage);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

describe("profile b's gauges with more requests than sequences", () => {
  test("cache_config_info maps the context's cells onto 16-token blocks; lora_requests_info is there", async () => {
    const text = await scrape();
    const [config] = samples(text, "vllm:cache_config_info");
    expect(config?.value).toBe(1);
    expect(config!.labels).toMatchObject({ ...labels, block_size: "16", enable_prefix_caching: "True" });
    // every sequence's context, in whole blocks
    expect(Number(config!.labels.num_gpu_blocks)).toBe(Math.floor((SEQUENCES * CONTEXT) / 16));
    const [lora] = samples(text, "vllm:lora_requests_info");
    expect(lora!.labels).toMatchObject({ ...labels, max_lora: "0", running_lora_adapters: "", waiting_lora_adapters: "" });
    expect(Math.abs(lora!.value - Date.now() / 1000)).toBeLessThan(60);
  });

  test("running, waiting and KV usage are true at every scrape; prefix counters match the usage clients got", async () => {
    const before = await scrape();
    const blocks = Number(samples(before, "vllm:cache_config_info")[0]!.labels.num_gpu_blocks);
    const capacityAtMost = blocks * 16 + 15;
    const outstanding = { count: 0 };
    const usages: Usage[] = [];
    const track = <T extends Usage>(work: Promise<T>): Promise<T> => {
      outstanding.count++;
      return work.then((usage) => { usages.push(usage); return usage; }).finally(() => outstanding.count--);
    };

    // Two long generations take both sequences; each has streamed a token, so each holds one.
    outstanding.count += 2;
    const long = [longStream("The first long story"), longStream("The second long story")];
    await until(() => long.every((l) => l.state.chunks > 0), "both long streams to start");

    // Four more requests can only wait while the long ones run.
    const short = ["one", "two", "three", "four"].map((word) => track(shortRequest(`Say ${word}`)));
    const growth: Array<{ usage: number; chunks: number[] }> = [];
    let sawAllWaiting = false;
    await until(async () => {
      const chunks = long.map((l) => l.state.chunks);
      const text = await scrape();
      if (long.some((l) => l.state.ended)) throw new Error("a long generation ended before the other requests queued: make it longer");
      expect(sample(text, "vllm:num_requests_running", labels)).toBe(SEQUENCES);
      const waiting = sample(text, "vllm:num_requests_waiting", labels)!;
      expect(waiting).toBeLessThanOrEqual(4);
      growth.push({ usage: sample(text, "vllm:kv_cache_usage_perc", labels)!, chunks });
      sawAllWaiting = waiting === 4;
      return sawAllWaiting && growth.length >= 3;
    }, "the four short requests to wait");
    expect(sawAllWaiting).toBe(true);

    // From here on, every scrape: no more running than sequences, and nothing counted that no client is waiting for
    // (no request starts in this phase, so the count taken before a scrape bounds what it may see).
    let finished = false;
    const all = Promise.all([...long.map((l) => l.done), ...short]).finally(() => { finished = true; });
    while (!finished) {
      const inFlight = outstanding.count - long.filter((l) => l.state.ended).length;
      const text = await scrape();
      const running = sample(text, "vllm:num_requests_running", labels)!;
      const waiting = sample(text, "vllm:num_requests_waiting", labels)!;
      expect(running).toBeLessThanOrEqual(SEQUENCES);
      expect(running + waiting).toBeLessThanOrEqual(inFlight);
      await Bun.sleep(50);
    }
    await all;

    // KV usage rose while the two sequences grew, and always covered what they had streamed.
    const longUsages = long.map((l) => l.state.usage!);
    usages.push(...longUsages);
    for (let i = 1; i < growth.length; i++) expect(growth[i]!.usage).toBeGreaterThanOrEqual(growth[i - 1]!.usage);
    expect(growth.at(-1)!.usage).toBeGreaterThan(growth[0]!.usage);
    for (const { usage, chunks } of growth) {
      const heldAtLeast = longUsages.reduce((sum, u, i) => sum + u.prompt + chunks[i]!, 0);
      expect(usage * capacityAtMost).toBeGreaterThanOrEqual(heldAtLeast);
    }

    // A follow-up turn reads its prefix from the cache.
    const system = "You are a careful assistant. ".repeat(40);
    const first = await client.chat.completions.create({
      model: MODEL, messages: [{ role: "system", content: system }, { role: "user", content: "Hello" }], max_tokens: 8, temperature: 0,
    });
    const second = await client.chat.completions.create({
      model: MODEL, temperature: 0, max_tokens: 8,
      messages: [{ role: "system", content: system }, { role: "user", content: "Hello" }, first.choices[0]!.message, { role: "user", content: "And then?" }],
    });
    usages.push(usageOf(first.usage), usageOf(second.usage));
    expect(usageOf(second.usage).cached).toBeGreaterThan(0);

    // Idle: nothing runs or waits, and the cached prefixes left behind count as free, as vLLM's freed blocks do.
    const after = await scrape();
    expect(sample(after, "vllm:num_requests_running", labels)).toBe(0);
    expect(sample(after, "vllm:num_requests_waiting", labels)).toBe(0);
    expect(sample(after, "vllm:kv_cache_usage_perc", labels)).toBe(0);

    const delta = (name: string) => sample(after, name, labels)! - sample(before, name, labels)!;
    expect(usages).toHaveLength(8);
    expect(delta("vllm:prefix_cache_queries_total")).toBe(usages.reduce((sum, u) => sum + u.prompt, 0));
    expect(delta("vllm:prefix_cache_hits_total")).toBe(usages.reduce((sum, u) => sum + u.cached, 0));
  }, 180_000);
});
