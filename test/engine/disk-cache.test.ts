// The disk tier of the prompt cache on real libllama and generated models: a state written before the
// engine goes away is restored by the next engine of the same model and settings, generating exactly what
// a cold engine generates; damaged files are skipped, other models' states never offered; both tiers stay
// within their caps under a thousand distinct long prompts.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../../src/engine/engine.ts";
import type { EngineOptions } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { run } from "./engine-run.ts";

const greedy = { temperature: 0 };
/** A long agent-like prompt: a system part of `lines` rules, then a question. */
function prompt(topic: string, question: string, lines = 40): string {
  const system = Array.from({ length: lines }, (_, i) => `${topic} rule ${i}: answer about ${topic} plainly, cite the file and keep it short.`).join("\n");
  return `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${question}<|im_end|>\n<|im_start|>assistant\n`;
}
const files = (dir: string) => readdirSync(dir, { recursive: true }).map(String).filter((name) => name.endsWith(".state")).map((name) => join(dir, name));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "llamux-disk-cache-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function loaded(options: EngineOptions): Promise<Engine> {
  const engine = Engine.load(options);
  await engine.diskCacheReady;
  return engine;
}

describe.each(["tiny-llama", "tiny-lfm2"] as const)("%s: after a restart", (name) => {
  let modelPath: string;
  let cold: Engine;
  beforeAll(async () => {
    modelPath = await ensureModel(name);
    cold = Engine.load({ modelPath, parallel: 1, contextPerSequence: 2048, threads: 2, cacheRamMiB: 0 });
  });
  afterAll(() => cold.dispose());
  const base = () => ({ modelPath, parallel: 1, contextPerSequence: 2048, threads: 2, cacheDisk: { dir, limitMiB: 256 } });

  test("the session's next turn restores its state from disk and generates the cold engine's tokens", async () => {
    const first = prompt("deploy", "List the steps.");
    const before = await loaded(base());
    const turn1 = await run(before, { prompt: first, maxTokens: 4, sampling: greedy });
    expect(turn1.done?.finishReason).toBeDefined();
    await before.flushDiskCache();
    before.dispose();
    expect(files(dir).length).toBeGreaterThan(0);

    const after = await loaded(base());
    try {
      expect(after.stats().diskCache?.entries).toBeGreaterThan(0);
      const next = `${first}The steps are listed.<|im_end|>\n<|im_start|>user\nAnd the second one?<|im_end|>\n<|im_start|>assistant\n`;
      const restored = await run(after, { prompt: next, maxTokens: 12, sampling: greedy, ignoreEos: true });
      const reference = await run(cold, { prompt: next, maxTokens: 12, sampling: greedy, ignoreEos: true });
      expect(restored.tokens).toEqual(reference.tokens);
      const firstTokens = after.tokenize(first).length;
      // a recurrent state serves only prompts holding all of its tokens: the first turn's prompt and reply
      expect(restored.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(firstTokens - 1);
      expect(after.stats().diskCache?.hits).toBe(1);
      expect(after.stats().diskCache?.loaded).toBe(1);
    } finally {
      after.dispose();
    }
  });

  test("a next turn whose state is only on disk is read while a cold prompt runs, then takes that prompt's busy sequence", async () => {
    const first = prompt("deploy", "List the steps.");
    const before = await loaded(base());
    await run(before, { prompt: first, maxTokens: 4, sampling: greedy });
    await before.flushDiskCache();
    before.dispose();

    // one sequence, 64-token steps: the cold prompt spans ~40 steps, time for the read to end beside it
    const after = await loaded({ ...base(), contextPerSequence: 4096, batchSize: 64 });
    try {
      const next = `${first}The steps are listed.<|im_end|>\n<|im_start|>user\nAnd the second one?<|im_end|>\n<|im_start|>assistant\n`;
      const coldText = prompt("weather", "Will it rain?", 90);
      expect(after.tokenize(coldText).length).toBeGreaterThan(1500);
      const finished: string[] = [];
      let warm: ReturnType<typeof run> | undefined;
      const coldOutcome = await run(after, { prompt: coldText, maxTokens: 2, sampling: greedy, ignoreEos: true }, undefined, () => {
        warm ??= run(after, { prompt: next, maxTokens: 2, sampling: greedy, ignoreEos: true }).then((o) => { finished.push("warm"); return o; });
      }).then((o) => { finished.push("cold"); return o; });
      const warmOutcome = await warm!;
      expect(finished).toEqual(["warm", "cold"]);
      expect(after.stats().diskCache?.loaded).toBe(1);
      expect(after.stats().preemptions).toBe(1);
      expect(warmOutcome.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(after.tokenize(first).length - 1);
      expect(coldOutcome.done?.finishReason).toBe("length");
    } finally {
      after.dispose();
    }
  });

  test("damaged files are skipped and removed; the prompt is processed as if cold", async () => {
    const first = prompt("billing", "Explain the invoice.");
    const before = await loaded(base());
    await run(before, { prompt: first, maxTokens: 2, sampling: greedy });
    await before.flushDiskCache();
    before.dispose();
    const written = files(dir);
    expect(written.length).toBeGreaterThan(0);
    for (const path of written) writeFileSync(path, new Uint8Array(statSync(path).size).fill(0x41));

    const after = await loaded(base());
    try {
      expect(after.stats().diskCache?.entries).toBe(0);
      expect(after.stats().diskCache?.failed).toBe(written.length);
      const again = await run(after, { prompt: first, maxTokens: 8, sampling: greedy, ignoreEos: true });
      const reference = await run(cold, { prompt: first, maxTokens: 8, sampling: greedy, ignoreEos: true });
      expect(again.tokens).toEqual(reference.tokens);
      expect(again.done!.usage.cachedPromptTokens).toBe(0);
      // what is on disk now is this engine's fresh state, which the next engine reads without a complaint
      await after.flushDiskCache();
    } finally {
      after.dispose();
    }
    const third = await loaded(base());
    expect(third.stats().diskCache).toMatchObject({ failed: 0 });
    expect(third.stats().diskCache!.entries).toBeGreaterThan(0);
    third.dispose();
  });
});

test("tiny-lfm2: after a restart, a new session keeps what it shares with a saved state up to one of its marks", async () => {
  const modelPath = await ensureModel("tiny-lfm2");
  const options = { modelPath, parallel: 1, contextPerSequence: 2048, threads: 2, cacheDisk: { dir, limitMiB: 256 } };
  const first = prompt("release", "List the steps.", 80);
  const before = await loaded(options);
  await run(before, { prompt: first, maxTokens: 4, sampling: greedy });
  await before.flushDiskCache();
  before.dispose();

  const second = prompt("release", "Which step is the riskiest?", 80);
  const after = await loaded(options);
  const cold = Engine.load({ ...options, cacheDisk: undefined, cacheRamMiB: 0 });
  try {
    const shared = after.tokenize(second).findIndex((token, i) => token !== after.tokenize(first)[i]);
    expect(shared).toBeGreaterThan(1024);
    const restored = await run(after, { prompt: second, maxTokens: 8, sampling: greedy, ignoreEos: true });
    expect(restored.done!.usage.cachedPromptTokens).toBe(Math.floor(shared / 512) * 512);
    expect(after.stats().diskCache?.hits).toBe(1);
    expect(restored.tokens).toEqual((await run(cold, { prompt: second, maxTokens: 8, sampling: greedy, ignoreEos: true })).tokens);
  } finally {
    after.dispose();
    cold.dispose();
  }
});

test("another model's states, or the same model's under another KV cache type, are never offered", async () => {
  const first = prompt("routing", "Which replica?");
  const llama = await loaded({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 2048, threads: 2, cacheDisk: { dir, limitMiB: 64 } });
  await run(llama, { prompt: first, maxTokens: 2, sampling: greedy });
  await llama.flushDiskCache();
  llama.dispose();
  const quantized = await loaded({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 2048, threads: 2, kvCacheType: "f32", cacheDisk: { dir, limitMiB: 64 } });
  try {
    expect(quantized.stats().diskCache?.entries).toBe(0);
    const outcome = await run(quantized, { prompt: first, maxTokens: 2, sampling: greedy });
    expect(outcome.done!.usage.cachedPromptTokens).toBe(0);
  } finally {
    quantized.dispose();
  }
});

test("under 1,000 distinct long prompts the host and disk tiers stay within their caps, and so does the engine's memory", async () => {
  const ramMiB = 4;
  const diskMiB = 8;
  // one thread: a thousand prompts of just over the disk tier's minimum take about a minute on two cores
  const engine = await loaded({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 2048, threads: 1, cacheRamMiB: ramMiB, cacheDisk: { dir, limitMiB: diskMiB } });
  try {
    Bun.gc(true);
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    for (let i = 0; i < 1000; i++) {
      const outcome = await run(engine, { prompt: prompt(`topic ${i}`, `question ${i}`, 23), maxTokens: 1, sampling: greedy });
      expect(outcome.error).toBeUndefined();
      const stats = engine.stats();
      expect(stats.promptCache!.bytes).toBeLessThanOrEqual(ramMiB * 1048576);
      if (i % 100 === 99) {
        await engine.flushDiskCache();
        const onDisk = files(dir).reduce((sum, path) => sum + statSync(path).size, 0);
        expect(onDisk).toBeLessThanOrEqual(diskMiB * 1048576);
        Bun.gc(true);
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }
    }
    const stats = engine.stats();
    expect(stats.promptCache!.evicted).toBeGreaterThan(900);
    expect(stats.diskCache!.evicted).toBeGreaterThan(500);
    // evicted states are freed as they go: growth stays near the caps, far below the 1,000 states' total
    // (kept states would grow it by all of that; the allocator's and the JS heap's slack take some of half)
    const stateBytes = 1000 * (stats.promptCache!.bytes / Math.max(1, stats.promptCache!.entries));
    expect(peakRss - rssBefore).toBeLessThan(Math.min(stateBytes / 2, (ramMiB + 128) * 1048576));
  } finally {
    engine.dispose();
  }
}, 300_000);
