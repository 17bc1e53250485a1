// LoRA adapters per request on real libllama and generated adapters: each request gets exactly the tokens
// it gets on an engine with its adapter fixed (Modelfile ADAPTER), whatever runs beside it; no state
// computed under one adapter is ever reused under another (live sequences, host cache, disk tier); adapters
// take turns, --max-loras holds the others back, and adapters load, unload and fail as vLLM's do.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../../src/engine/engine.ts";
import { EngineError, type EngineOptions, type GenerateRequest } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { run } from "./engine-run.ts";

const greedy = { temperature: 0 };
/** A prompt long enough that what a sequence loses of it goes to the host cache (PROMPT_CACHE_MIN_TOKENS). */
function prompt(topic: string, lines = 8): string {
  const rules = Array.from({ length: lines }, (_, i) => `Rule ${i} about ${topic}: answer plainly and keep it short.`).join("\n");
  return `<|im_start|>system\n${rules}<|im_end|>\n<|im_start|>user\nTell me about ${topic}.<|im_end|>\n<|im_start|>assistant\n`;
}
const P = prompt("dragons");
const request = (adapter?: string, text = P, maxTokens = 16): Omit<GenerateRequest, "id"> =>
  ({ prompt: text, maxTokens, sampling: greedy, ignoreEos: true, ...(adapter ? { adapter } : {}) });

let modelPath: string;
let loraA: string;
let loraB: string;
/** What each adapter gives alone, from engines with that adapter fixed (Modelfile ADAPTER). */
const alone = new Map<string | undefined, number[]>();

async function reference(adapterPath: string | undefined, text = P, maxTokens = 16): Promise<number[]> {
  const engine = Engine.load({ modelPath, parallel: 1, contextPerSequence: 1024, threads: 1, cacheRamMiB: 0, ...(adapterPath ? { loraAdapters: [adapterPath] } : {}) });
  try {
    return (await run(engine, request(undefined, text, maxTokens))).tokens;
  } finally {
    void engine.dispose();
  }
}

/** An engine serving adapters "a" and "b" per request. */
const withAdapters = ({ maxLoras, ...rest }: Partial<EngineOptions> & { maxLoras?: number } = {}): EngineOptions => ({
  modelPath, parallel: 4, contextPerSequence: 1024, threads: 1,
  lora: { modules: [{ name: "a", path: loraA }, { name: "b", path: loraB }], ...(maxLoras ? { maxLoras } : {}) },
  ...rest,
});

beforeAll(async () => {
  modelPath = await ensureModel("tiny-llama");
  loraA = await ensureModel("tiny-llama-lora");
  loraB = await ensureModel("tiny-llama-lora-b");
  alone.set(undefined, await reference(undefined));
  alone.set("a", await reference(loraA));
  alone.set("b", await reference(loraB));
  // the test means nothing if the adapters did not change the output
  expect(new Set([...alone.values()].map((tokens) => tokens.join(","))).size).toBe(3);
});

describe("requests on two adapters and the base model at once", () => {
  let engine: Engine;
  beforeAll(() => {
    engine = Engine.load(withAdapters({ maxLoras: 2 }));
  });
  afterAll(() => void engine.dispose());

  test("each request gets exactly the tokens it gets alone", async () => {
    const adapters = [undefined, "a", "b", undefined, "a", "b"];
    const results = await Promise.all(adapters.map((adapter) => run(engine, request(adapter))));
    results.forEach((result, i) => expect(result.tokens).toEqual(alone.get(adapters[i])!));
  });

  test("the same prompts again, with every adapter's states cached, still give each its own tokens", async () => {
    const adapters = ["b", "a", undefined, "a"];
    const results = await Promise.all(adapters.map((adapter) => run(engine, request(adapter))));
    results.forEach((result, i) => expect(result.tokens).toEqual(alone.get(adapters[i])!));
  });

  test("adapters take turns: a short request on one adapter ends long before a long one on another", async () => {
    let shortDone = -1;
    let longTokens = 0;
    const long = run(engine, request("a", P, 48), (count) => (longTokens = count));
    const short = run(engine, request("b", prompt("castles"), 4)).then((result) => {
      shortDone = longTokens;
      return result;
    });
    const [longResult, shortResult] = await Promise.all([long, short]);
    expect(shortResult.tokens).toHaveLength(4);
    expect(longResult.tokens).toHaveLength(48);
    // the short one waited at most a turn or two of the long one's, not for all of it
    expect(shortDone).toBeLessThan(24);
  });
});

describe("a prefix computed under one adapter is never reused under another", () => {
  let engine: Engine;
  beforeAll(() => {
    // one sequence: every request takes the memory the one before it left, or the host cache's
    engine = Engine.load(withAdapters({ parallel: 1 }));
  });
  afterAll(() => void engine.dispose());

  test("live memory and host cache: only the same adapter's state is taken", async () => {
    const base = await run(engine, request());
    expect(base.tokens).toEqual(alone.get(undefined)!);
    // the base model's memory holds all of P: under adapter a none of it may be taken
    const a = await run(engine, request("a"));
    expect(a.tokens).toEqual(alone.get("a")!);
    expect(a.done!.usage.cachedPromptTokens).toBe(0);
    const again = await run(engine, request("a"));
    expect(again.tokens).toEqual(alone.get("a")!);
    expect(again.done!.usage.cachedPromptTokens).toBeGreaterThan(0);
    // the base model's state went to the host cache when a took the sequence: it comes back for the base only
    const b = await run(engine, request("b"));
    expect(b.tokens).toEqual(alone.get("b")!);
    expect(b.done!.usage.cachedPromptTokens).toBe(0);
    const baseAgain = await run(engine, request());
    expect(baseAgain.tokens).toEqual(alone.get(undefined)!);
    expect(baseAgain.done!.usage.cachedPromptTokens).toBeGreaterThan(0);
    expect(engine.stats().promptCache!.restored).toBeGreaterThan(0);
  });

  test("a name loaded again from another file finds none of the first file's states", async () => {
    const first = await run(engine, request("a"));
    expect(first.tokens).toEqual(alone.get("a")!);
    engine.loadAdapter("a", loraB);
    const replaced = await run(engine, request("a"));
    expect(replaced.tokens).toEqual(alone.get("b")!);
    expect(replaced.done!.usage.cachedPromptTokens).toBe(0);
    engine.loadAdapter("a", loraA);
  });
});

describe("the disk tier keeps each adapter's states apart", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "llamux-lora-disk-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("after a restart an adapter's state comes back for that adapter only", async () => {
    const long = prompt("harbours", 40);
    const references = { a: await reference(loraA, long, 8), b: await reference(loraB, long, 8) };
    const options = withAdapters({ parallel: 1, cacheDisk: { dir, limitMiB: 256 } });
    const before = Engine.load(options);
    await before.diskCacheReady;
    expect((await run(before, request("a", long, 8))).tokens).toEqual(references.a);
    await before.flushDiskCache();
    await before.dispose();

    const after = Engine.load(options);
    await after.diskCacheReady;
    try {
      const b = await run(after, request("b", long, 8));
      expect(b.tokens).toEqual(references.b);
      expect(b.done!.usage.cachedPromptTokens).toBe(0);
      const a = await run(after, request("a", long, 8));
      expect(a.tokens).toEqual(references.a);
      expect(a.done!.usage.cachedPromptTokens).toBeGreaterThan(0);
    } finally {
      await after.dispose();
    }
  });
});

describe("--max-loras and the adapters' stats", () => {
  test("an adapter beyond --max-loras waits while another runs; the base model runs beside it", async () => {
    const engine = Engine.load(withAdapters({ maxLoras: 1 }));
    try {
      let seen: ReturnType<Engine["stats"]>["loraAdapters"];
      const a = run(engine, request("a", P, 24), (count) => {
        if (count === 2) seen = engine.stats().loraAdapters;
      });
      const b = run(engine, request("b"));
      const base = run(engine, request());
      const results = await Promise.all([a, b, base]);
      expect(seen).toEqual({ maxLoras: 1, running: ["a"], waiting: ["b"] });
      expect(results[1].tokens).toEqual(alone.get("b")!);
      expect(results[2].tokens).toEqual(alone.get(undefined)!);
      expect(engine.stats().loraAdapters).toEqual({ maxLoras: 1, running: [], waiting: [] });
    } finally {
      void engine.dispose();
    }
  });
});

describe("loading and unloading at run time", () => {
  let engine: Engine;
  beforeAll(() => {
    engine = Engine.load(withAdapters({ maxLoras: 2 }));
  });
  afterAll(() => void engine.dispose());

  test("a loaded adapter serves requests that name it", async () => {
    engine.loadAdapter("c", loraB);
    expect((await run(engine, request("c"))).tokens).toEqual(alone.get("b")!);
  });

  test("an unloaded adapter finishes its requests in flight; a later request that names it is refused", async () => {
    let unloaded = false;
    const inFlight = run(engine, request("c", P, 24), (count) => {
      if (count === 2 && !unloaded) unloaded = engine.unloadAdapter("c");
    });
    const result = await inFlight;
    expect(unloaded).toBe(true);
    expect(result.tokens.slice(0, 16)).toEqual(alone.get("b")!);
    expect(() => engine.submit({ ...request("c"), id: "after-unload" }, () => {})).toThrow("The lora adapter 'c' cannot be found.");
    expect(engine.unloadAdapter("c")).toBe(false);
  });

  test("bad adapters are refused with the reason; the engine goes on serving", async () => {
    const refusal = (name: string, path: string) => {
      try {
        engine.loadAdapter(name, path);
      } catch (error) {
        expect(error).toBeInstanceOf(EngineError);
        expect((error as EngineError).code).toBe("invalid_request");
        return (error as Error).message;
      }
      throw new Error(`"${path}" was loaded`);
    };
    expect(refusal("gone", "/nonexistent/adapter.gguf")).toBe("Loading lora gone failed: No adapter found for /nonexistent/adapter.gguf");
    expect(refusal("lfm2", await ensureModel("tiny-lfm2-lora"))).toContain('is for architecture "lfm2", but the model is "llama"');
    expect(refusal("model", modelPath)).toContain("is not a LoRA adapter");
    expect(refusal("dir", tmpdir())).toContain("is a directory");
    expect((await run(engine, request("a"))).tokens).toEqual(alone.get("a")!);
  });

  test("an adapter above --max-lora-rank is refused in vLLM's words", () => {
    const small = Engine.load({ modelPath, parallel: 1, contextPerSequence: 256, threads: 1, lora: { maxRank: 4 } });
    try {
      expect(() => small.loadAdapter("b", loraB)).toThrow("LoRA rank 8 is greater than max_lora_rank 4.");
      small.loadAdapter("a", loraA);
    } finally {
      void small.dispose();
    }
  });

  test("without LoRA support, loads and requests naming an adapter are refused", () => {
    const plain = Engine.load({ modelPath, parallel: 1, contextPerSequence: 256, threads: 1 });
    try {
      expect(() => plain.loadAdapter("a", loraA)).toThrow("LoRA is not enabled. Use --enable-lora to enable LoRA.");
      expect(() => plain.submit({ ...request("a"), id: "no-lora" }, () => {})).toThrow("was loaded without LoRA support");
    } finally {
      void plain.dispose();
    }
  });

  test("a module that cannot load fails the engine's load, as vLLM's start fails", () => {
    expect(() => Engine.load({ modelPath, parallel: 1, contextPerSequence: 256, threads: 1, lora: { modules: [{ name: "x", path: "/nonexistent.gguf" }] } }))
      .toThrow("Loading lora x failed: No adapter found for /nonexistent.gguf");
  });
});
