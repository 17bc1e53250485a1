// The host prompt cache (--cache-ram) and prefixes copied between sequences, on real libllama and
// generated models: a prompt whose sequence was handed to another request is restored from host memory
// and generates what a cold engine generates; a prefix another sequence holds is copied in the KV cache;
// the cache stays within its bound, dropping the least recently used state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { PromptCache } from "../../src/engine/prompt-cache/host-cache.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { run, type Outcome } from "./engine-run.ts";
import { commonPrefixLength } from "../../src/engine/planning/prefix-reuse.ts";

const greedy = { temperature: 0 };
/** A chat prompt whose long system part starts with `topic`, so that prompts of different topics share no prefix. */
function chat(topic: string, question: string, lines = 12): string {
  const system = Array.from({ length: lines }, (_, i) => `${topic} rule ${i}: answer about ${topic} plainly and keep it short.`).join("\n");
  return `${topic}<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${question}<|im_end|>\n<|im_start|>assistant\n`;
}

describe("PromptCache", () => {
  const state = (bytes: number) => new Uint8Array(bytes);

  test("finds the entry sharing the longest prefix, leaving one prompt token to process", () => {
    const cache = new PromptCache(10_000, true);
    cache.store([1, 2, 3, 4], state(100));
    cache.store([1, 2, 9, 9, 9], state(100));
    expect(cache.find([1, 2, 3, 4, 5])?.keep).toBe(4);
    expect(cache.find([1, 2, 3, 4])?.keep).toBe(3);
    expect(cache.find([1, 2, 9, 8])?.keep).toBe(3);
    expect(cache.find([7, 1, 2])).toBeUndefined();
  });

  test("recurrent entries serve only prompts that start with all of their tokens; the same prompt needs logits", () => {
    const cache = new PromptCache(10_000, false);
    cache.store([1, 2, 3], state(100));
    expect(cache.find([1, 2, 3, 4])?.keep).toBe(3);
    expect(cache.find([1, 2, 4, 4])).toBeUndefined();
    expect(cache.find([1, 2, 3])).toBeUndefined();
    cache.store([5, 6, 7], state(100), { logits: new Float32Array(4) });
    expect(cache.find([5, 6, 7])?.keep).toBe(3);
  });

  test("a recurrent entry serves a prompt parting from it up to the last of its marks, which count in its size", () => {
    const cache = new PromptCache(10_000, false);
    const mark = (length: number) => ({ length, state: state(10) });
    const entry = cache.store([1, 2, 3, 4, 5, 6], state(100), { marks: [mark(2), mark(4), mark(6)] })!;
    // a mark at the entry's end is no mark of it: the whole state is
    expect(entry.marks.map((m) => m.length)).toEqual([2, 4]);
    expect(entry.bytes).toBe(100 + 6 * 4 + 2 * 10);
    expect(cache.find([1, 2, 3, 4, 5, 9])).toEqual({ entry, keep: 4 });
    expect(cache.find([1, 2, 3, 9])).toEqual({ entry, keep: 2 });
    expect(cache.find([1, 9])).toBeUndefined();
  });

  test("stays within its bound, evicting the least recently used entry and saying so", () => {
    const logged: string[] = [];
    const cache = new PromptCache(1000, true, { log: (line) => logged.push(line) });
    cache.store([1, 1], state(400));
    cache.store([2, 2], state(400));
    cache.touch(cache.find([1, 1, 5])!.entry);
    cache.store([3, 3], state(400));
    expect(cache.stats().bytes).toBeLessThanOrEqual(1000);
    expect(cache.stats().evicted).toBe(1);
    expect(cache.find([1, 1, 5])).toBeDefined();
    expect(cache.find([2, 2, 5])).toBeUndefined();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain("least recently used");
    // larger than the whole cache: not kept, nothing evicted for it
    expect(cache.store([4, 4], state(2000))).toBeUndefined();
    expect(cache.stats().entries).toBe(2);
  });

  test("a longer prefix replaces the entries it covers; a covered one is not stored", () => {
    const cache = new PromptCache(10_000, true);
    cache.store([1, 2], state(100));
    cache.store([1, 2, 3], state(100));
    expect(cache.stats().entries).toBe(1);
    expect(cache.store([1, 2], state(100))).toBeUndefined();
    expect(cache.stats().entries).toBe(1);
  });

  test("a request of a session renews its states, so a quiet session's go first", () => {
    const cache = new PromptCache(1000, true);
    cache.store([1, 1], state(400), { session: "agent-a" });
    cache.store([2, 2], state(400), { session: "agent-b" });
    cache.touchSession("agent-a");
    cache.store([3, 3], state(400));
    expect(cache.find([1, 1, 5])).toBeDefined();
    expect(cache.find([2, 2, 5])).toBeUndefined();
  });

  test("an evicted state is handed over (to the disk tier) before it is dropped", () => {
    const handed: number[][] = [];
    const cache = new PromptCache(1000, true, { onEvict: (entry) => handed.push(Array.from(entry.tokens)) });
    cache.store([1, 1], state(400));
    cache.store([2, 2], state(400));
    cache.store([3, 3], state(400));
    expect(handed).toEqual([[1, 1]]);
  });
});

describe("attention model: host cache and copies", () => {
  let path: string;
  let cold: Engine;
  beforeAll(async () => {
    path = await ensureModel("tiny-llama");
    cold = Engine.load({ modelPath: path, parallel: 1, contextPerSequence: 1024, threads: 2, cacheRamMiB: 0 });
  });
  afterAll(() => cold.dispose());

  test("a prompt whose sequence went to another request is restored from host memory and generates the cold tokens", async () => {
    const engine = Engine.load({ modelPath: path, parallel: 1, contextPerSequence: 1024, threads: 2, cacheRamMiB: 16 });
    try {
      const first = await run(engine, { prompt: chat("Dragons", "Who are you?"), maxTokens: 4, sampling: greedy, ignoreEos: true });
      const firstPrompt = first.done!.usage.promptTokens;
      expect(firstPrompt).toBeGreaterThan(200);
      // another request takes the only sequence: the first one's state goes to host memory
      await run(engine, { prompt: chat("Weather", "Is it raining?"), maxTokens: 4, sampling: greedy, ignoreEos: true });
      expect(engine.stats().promptCache!.stored).toBe(1);
      const nextTurn = { prompt: chat("Dragons", "Who are you?") + "I am a dragon.<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n", maxTokens: 12, sampling: greedy, ignoreEos: true };
      const hit = await run(engine, nextTurn);
      expect(engine.stats().promptCache!.restored).toBe(1);
      expect(hit.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(firstPrompt - 1);
      const reference = await run(cold, nextTurn);
      expect(reference.done!.usage.cachedPromptTokens).toBeLessThan(firstPrompt / 2);
      expect(hit.tokens).toHaveLength(12);
      expect(hit.tokens).toEqual(reference.tokens);
    } finally {
      engine.dispose();
    }
  });

  test("without a cache (--cache-ram 0) the same turn is processed again", async () => {
    await run(cold, { prompt: chat("Castles", "Who are you?"), maxTokens: 2, sampling: greedy });
    await run(cold, { prompt: chat("Rivers", "Where?"), maxTokens: 2, sampling: greedy });
    const again = await run(cold, { prompt: chat("Castles", "Who are you?"), maxTokens: 2, sampling: greedy });
    expect(again.done!.usage.cachedPromptTokens).toBeLessThanOrEqual(1);
    expect(cold.stats().promptCache).toBeUndefined();
  });

  // Two sequences of 1024 tokens each get a KV stream of their own; a shared 1024-token pool is one unified cache.
  for (const layout of [{ name: "own streams", sharedContext: undefined }, { name: "a shared pool", sharedContext: 1024 }]) {
    test(`a prefix another running sequence holds is copied, not processed, with the cold tokens (${layout.name})`, async () => {
      const engine = Engine.load({ modelPath: path, parallel: 2, contextPerSequence: 1024, sharedContext: layout.sharedContext, threads: 2, cacheRamMiB: 16 });
      try {
        expect(engine.info.sharedKvPool).toBe(layout.sharedContext !== undefined);
        const shared = chat("Agents", "List the files.");
        const second = { prompt: `${shared}Here are the files:`, maxTokens: 10, sampling: greedy, ignoreEos: true };
        let secondRun: Promise<Outcome> | undefined;
        // the second request arrives while the first one generates (its prompt is in the first sequence)
        const first = run(engine, { prompt: shared, maxTokens: 30, sampling: greedy, ignoreEos: true }, (count) => {
          if (count === 2) secondRun = run(engine, second);
        });
        const firstOutcome = await first;
        const copied = await secondRun!;
        expect(engine.stats().copiedPrefixTokens).toBeGreaterThanOrEqual(engine.tokenize(shared).length - 1);
        expect(copied.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(engine.tokenize(shared).length - 1);
        const reference = await run(cold, second);
        expect(copied.tokens).toEqual(reference.tokens);
        // the source sequence went on undisturbed by the copy
        expect(firstOutcome.tokens).toEqual((await run(cold, { prompt: shared, maxTokens: 30, sampling: greedy, ignoreEos: true })).tokens);
        const sharedTokens = engine.tokenize(shared).length;
        if (layout.sharedContext !== undefined) {
          // in one pool both sequences' cells are counted once: the shared prefix is not paid for twice
          expect(engine.stats().usedTokens).toBeLessThan(2 * sharedTokens);
        } else {
          expect(engine.stats().usedTokens).toBeGreaterThanOrEqual(2 * sharedTokens);
        }
      } finally {
        engine.dispose();
      }
    });
  }

  test("the cache stays within --cache-ram: the least recently used state is evicted", async () => {
    // 0.1 MiB holds one ~300-token state of this model (256 bytes per token), not two
    const engine = Engine.load({ modelPath: path, parallel: 1, contextPerSequence: 1024, threads: 2, cacheRamMiB: 0.1 });
    const write = process.stderr.write.bind(process.stderr);
    const level = process.env.LLAMUX_LOG_LEVEL;
    process.env.LLAMUX_LOG_LEVEL = "info";
    let logged = "";
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      logged += String(chunk);
      return write(chunk, ...rest);
    }) as typeof process.stderr.write;
    try {
      const topics = ["Dragons", "Weather", "Castles"];
      for (const topic of topics) await run(engine, { prompt: chat(topic, "Hello?"), maxTokens: 2, sampling: greedy });
      process.stderr.write = write;
      expect(logged).toMatch(/INFO .*\[engine\] prompt cache: evicted \d+ tokens .* least recently used/);
      const stats = engine.stats().promptCache!;
      expect(stats.stored).toBe(2);
      expect(stats.evicted).toBe(1);
      expect(stats.entries).toBe(1);
      expect(stats.bytes).toBeLessThanOrEqual(0.1 * 1048576);
      // the newer one (Weather) is restored, the oldest (Dragons) is gone
      const weather = await run(engine, { prompt: chat("Weather", "Hello?"), maxTokens: 2, sampling: greedy });
      expect(weather.done!.usage.cachedPromptTokens).toBe(weather.done!.usage.promptTokens - 1);
      const dragons = await run(engine, { prompt: chat("Dragons", "Hello?"), maxTokens: 2, sampling: greedy });
      expect(dragons.done!.usage.cachedPromptTokens).toBeLessThanOrEqual(1);
      expect(engine.stats().promptCache!.bytes).toBeLessThanOrEqual(0.1 * 1048576);
    } finally {
      process.stderr.write = write;
      if (level === undefined) delete process.env.LLAMUX_LOG_LEVEL;
      else process.env.LLAMUX_LOG_LEVEL = level;
      engine.dispose();
    }
  });
});

describe("hybrid LFM2: host-cached checkpoints", () => {
  /** tiny-lfm2 with a host cache, and the same without one for reference tokens; both disposed after `body`. */
  async function withEngines(parallel: number, body: (engine: Engine, cold: Engine) => Promise<void>, contextPerSequence = 1024): Promise<void> {
    const options = { modelPath: await ensureModel("tiny-lfm2"), parallel, contextPerSequence, threads: 2 };
    const engine = Engine.load({ ...options, cacheRamMiB: 16 });
    const cold = Engine.load({ ...options, cacheRamMiB: 0 });
    try {
      await body(engine, cold);
    } finally {
      engine.dispose();
      cold.dispose();
    }
  }

  /** Agents' turns: one system prompt of `rules` rules, then each session's own question; and the system prompt's length in tokens. */
  function agentSessions(engine: Engine, rules = 12) {
    const system = `<|startoftext|>${chat("Agents", "", rules).slice("Agents".length).split("<|im_start|>user")[0]}`;
    const session = (question: string) => ({
      prompt: `${system}<|im_start|>user\n${question} ${"Tell me about the files of this project. ".repeat(4)}<|im_end|>\n<|im_start|>assistant\n`,
      maxTokens: 4, sampling: greedy, ignoreEos: true, addSpecial: false,
    });
    return { session, systemTokens: engine.tokenize(system, false, true).length };
  }

  test("a next turn after the sequence went to another request restores the checkpoint and generates the cold tokens", async () => {
    await withEngines(1, async (engine, cold) => {
      const prompt = `<|startoftext|>${chat("Dragons", "Who are you?", 4).slice("Dragons".length)}`;
      const first = await run(engine, { prompt, maxTokens: 6, sampling: greedy, ignoreEos: true, addSpecial: false });
      const promptTokens = first.done!.usage.promptTokens;
      expect(promptTokens).toBeGreaterThan(64);
      await run(engine, { prompt: `<|startoftext|>${chat("Weather", "Rain?", 4)}`, maxTokens: 2, sampling: greedy, addSpecial: false });
      // a client re-renders the answer: only the prompt is shared, which the checkpoint covers
      const nextTurn = { prompt: `${prompt}A different answer<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n`, maxTokens: 8, sampling: greedy, ignoreEos: true, addSpecial: false };
      const hit = await run(engine, nextTurn);
      expect(engine.stats().promptCache!.restored).toBe(1);
      expect(hit.done!.usage.cachedPromptTokens).toBe(promptTokens);
      const reference = await run(cold, nextTurn);
      expect(reference.done!.usage.cachedPromptTokens).toBe(0);
      expect(hit.tokens).toEqual(reference.tokens);
    });
  });

  test("a session that finds the system prompt only in a host-cached state saves it where they part, and the next restores it", async () => {
    await withEngines(1, async (engine, cold) => {
      const { session, systemTokens } = agentSessions(engine);
      await run(engine, session("First?"));
      // the only sequence goes to another request: the first session's checkpoint moves to the host cache
      await run(engine, { prompt: `<|startoftext|>${chat("Weather", "Rain?", 4)}`, maxTokens: 2, sampling: greedy, addSpecial: false });
      const storedBefore = engine.stats().promptCache!.stored;
      expect(storedBefore).toBeGreaterThanOrEqual(1);
      // no sequence holds the system prompt now, the cached checkpoint does: the second session saves it
      await run(engine, session("Second?"));
      expect(engine.stats().promptCache!.stored).toBeGreaterThan(storedBefore);
      const third = await run(engine, session("Third?"));
      expect(third.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(systemTokens - 2);
      const reference = await run(cold, session("Third?"));
      expect(third.tokens).toEqual(reference.tokens);
    });
  });

  test("sessions sharing a system prompt: the second saves its state where they part, and the third restores it", async () => {
    await withEngines(2, async (engine, cold) => {
      const { session, systemTokens } = agentSessions(engine);
      expect(systemTokens).toBeGreaterThan(64);
      await run(engine, session("First?"));
      // the first session's sequence holds the system prompt: the second stops there once, for the cache
      await run(engine, session("Second?"));
      expect(engine.stats().promptCache!.stored).toBe(1);
      const third = await run(engine, session("Third?"));
      expect(engine.stats().promptCache!.restored).toBe(1);
      expect(third.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(systemTokens - 2);
      const reference = await run(cold, session("Third?"));
      expect(third.tokens).toEqual(reference.tokens);
    });
  });

  // A system prompt of about 1,300 tokens: marks every 512 tokens (a 2,048-token context) fall inside it.
  const longSessions = (engine: Engine) => agentSessions(engine, 75);
  const markBefore = (engine: Engine, a: string, b: string) => {
    const shared = commonPrefixLength(engine.tokenize(a, false, true), engine.tokenize(b, false, true));
    return Math.floor(shared / 512) * 512;
  };

  test("a new session's first prompt keeps what it shares with the last session's up to a mark, and generates the cold tokens", async () => {
    await withEngines(1, async (engine, cold) => {
      const { session, systemTokens } = longSessions(engine);
      expect(systemTokens).toBeGreaterThan(1024);
      const first = session("First?");
      const firstRun = await run(engine, first);
      expect(firstRun.done!.usage.cachedPromptTokens).toBe(0);
      const second = await run(engine, session("Second?"));
      const mark = markBefore(engine, first.prompt, session("Second?").prompt);
      expect(mark).toBe(1024);
      expect(second.done!.usage.cachedPromptTokens).toBe(mark);
      expect(second.tokens).toEqual((await run(cold, session("Second?"))).tokens);
      // the first session's whole memory went to host memory before its sequence went back to the mark
      const nextTurn = { ...first, prompt: `${first.prompt}Answer.<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n` };
      const continued = await run(engine, nextTurn);
      expect(continued.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(firstRun.done!.usage.promptTokens);
      expect(continued.tokens).toEqual((await run(cold, nextTurn)).tokens);
    }, 2048);
  });

  test("a state in host memory serves a prompt that parts from it, up to one of its marks", async () => {
    await withEngines(1, async (engine, cold) => {
      const { session } = longSessions(engine);
      await run(engine, session("First?"));
      // the only sequence goes to another request: the first session's state and its marks move to host memory
      await run(engine, { prompt: `<|startoftext|>${chat("Weather", "Rain?", 4)}`, maxTokens: 2, sampling: greedy, addSpecial: false });
      const restoredBefore = engine.stats().promptCache!.restored;
      const second = await run(engine, session("Second?"));
      expect(engine.stats().promptCache!.restored).toBe(restoredBefore + 1);
      expect(second.done!.usage.cachedPromptTokens).toBe(markBefore(engine, session("First?").prompt, session("Second?").prompt));
      expect(second.tokens).toEqual((await run(cold, session("Second?"))).tokens);
    }, 2048);
  });
});
