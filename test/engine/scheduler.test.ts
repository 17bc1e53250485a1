// The engine in-process, on real libllama and generated models: determinism under batching, stop
// strings across token boundaries, cancellation, prefix reuse, the busy queue, and every model type.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { EngineError, type EngineEvent, type GenerateRequest, type TokenLogprobs } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

interface Outcome {
  tokens: number[];
  text: string;
  logprobs?: TokenLogprobs[];
  done?: Extract<EngineEvent, { type: "done" }>;
  error?: Extract<EngineEvent, { type: "error" }>;
  progress?: Extract<EngineEvent, { type: "progress" }>[];
}

let nextId = 0;
/** Submits a request and resolves with everything it produced. */
function run(
  engine: Engine, request: Omit<GenerateRequest, "id">, onToken?: (id: string, count: number) => void, onProgress?: () => void,
): { id: string; result: Promise<Outcome> } {
  const id = `t${++nextId}`;
  const outcome: Outcome = { tokens: [], text: "" };
  const result = new Promise<Outcome>((resolve) => {
    try {
      engine.submit({ ...request, id }, (event) => {
        if (event.type === "token") {
          if (event.token >= 0) outcome.tokens.push(event.token);
          if (event.logprobs) (outcome.logprobs ??= []).push(event.logprobs);
          outcome.text += event.text;
          onToken?.(id, outcome.tokens.length);
        } else if (event.type === "progress") {
          (outcome.progress ??= []).push(event);
          onProgress?.();
        } else if (event.type === "done") {
          outcome.done = event;
          resolve(outcome);
        } else {
          outcome.error = event;
          resolve(outcome);
        }
      });
    } catch (error) {
      const code = error instanceof EngineError ? error.code : "engine_failure";
      outcome.error = { type: "error", id, code, message: (error as Error).message };
      resolve(outcome);
    }
  });
  return { id, result };
}

const greedy = { temperature: 0 };
const prompt = "<|im_start|>user\nTell me a story about a dragon<|im_end|>\n<|im_start|>assistant\n";

describe("llama-architecture engine", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 8, contextPerSequence: 512, threads: 2 });
  });
  afterAll(() => engine.dispose());

  test("greedy generation is deterministic", async () => {
    const a = await run(engine, { prompt, maxTokens: 24, sampling: greedy, ignoreEos: true }).result;
    const b = await run(engine, { prompt, maxTokens: 24, sampling: greedy, ignoreEos: true }).result;
    expect(a.done?.finishReason).toBe("length");
    expect(a.tokens).toHaveLength(24);
    expect(b.tokens).toEqual(a.tokens);
  });

  test("a request alone and alongside seven others gives the same tokens", async () => {
    const alone = await run(engine, { prompt, maxTokens: 24, sampling: greedy, ignoreEos: true }).result;
    const others = Array.from({ length: 7 }, (_, i) =>
      run(engine, { prompt: `Story number ${i}: once upon a time`, maxTokens: 24, sampling: greedy, ignoreEos: true }).result);
    const together = run(engine, { prompt, maxTokens: 24, sampling: greedy, ignoreEos: true }).result;
    const results = await Promise.all([together, ...others]);
    expect(results.every((r) => r.done?.finishReason === "length")).toBe(true);
    expect(results[0]!.tokens).toEqual(alone.tokens);
  });

  test("seeded sampling is reproducible and differs across seeds", async () => {
    const sampling = { temperature: 1, topK: 0, topP: 1, minP: 0 };
    const a = await run(engine, { prompt, maxTokens: 16, ignoreEos: true, sampling: { ...sampling, seed: 7 } }).result;
    const b = await run(engine, { prompt, maxTokens: 16, ignoreEos: true, sampling: { ...sampling, seed: 7 } }).result;
    const c = await run(engine, { prompt, maxTokens: 16, ignoreEos: true, sampling: { ...sampling, seed: 8 } }).result;
    expect(b.tokens).toEqual(a.tokens);
    expect(c.tokens).not.toEqual(a.tokens);
  });

  test("a stop string spread over two tokens ends the output before it", async () => {
    const free = await run(engine, { prompt, maxTokens: 40, sampling: greedy, ignoreEos: true }).result;
    // Build a stop string from the tail of one token's text and the head of the next one's, such that
    // its first occurrence in the output crosses that token boundary.
    const pieces = free.tokens.map((t) => engine.detokenize([t]));
    expect(pieces.join("")).toBe(free.text);
    let stop = "";
    for (let i = 0, offset = 0; i + 1 < pieces.length && !stop; offset += pieces[i]!.length, i++) {
      const head = pieces[i]!.slice(-2);
      const candidate = head + pieces[i + 1]!.slice(0, 2);
      const boundary = offset + pieces[i]!.length;
      const first = free.text.indexOf(candidate);
      if (head && candidate.length > head.length && first < boundary && first + candidate.length > boundary) stop = candidate;
    }
    expect(stop).not.toBe("");
    const expected = free.text.slice(0, free.text.indexOf(stop));
    const stopped = await run(engine, { prompt, maxTokens: 40, sampling: greedy, ignoreEos: true, stop: [stop] }).result;
    expect(stopped.done?.finishReason).toBe("stop");
    expect(stopped.done?.stop).toBe(stop);
    expect(stopped.text).toBe(expected);
    const included = await run(engine, { prompt, maxTokens: 40, sampling: greedy, ignoreEos: true, stop: [stop], includeStopString: true }).result;
    expect(included.text).toBe(expected + stop);
  });

  test("cancelling frees the sequence within one step", async () => {
    const single = Engine.load({ modelPath: engine.info.path, parallel: 1, contextPerSequence: 512, threads: 2 });
    try {
      let cancelledAt = 0;
      const long = run(single, { prompt, maxTokens: 400, sampling: greedy, ignoreEos: true }, (id, count) => {
        if (count === 3) {
          cancelledAt = count;
          single.cancel(id);
        }
      });
      const waiting = run(single, { prompt, maxTokens: 4, sampling: greedy, ignoreEos: true });
      const cancelled = await long.result;
      expect(cancelled.done?.finishReason).toBe("cancelled");
      // Cancelled in the callback of token 3: at most the token of the step in flight follows.
      expect(cancelled.tokens.length).toBeLessThanOrEqual(cancelledAt + 1);
      const next = await waiting.result;
      expect(next.done?.finishReason).toBe("length");
      // The cancelled sequence's cache was dropped, not kept for reuse.
      expect(next.done?.usage.cachedPromptTokens).toBe(0);
    } finally {
      single.dispose();
    }
  });

  // planning/step-budget.ts: a burst that finishes within two batches goes through as llama-server takes
  // it, so that no stream pauses for the burst's later prompts; a longer one still lets short prompts out first.
  const storyPrompt = (i: number, repeats: number) => `${i} ${"the dragon flew over the hills and ".repeat(repeats)}`;
  /** Runs the prompts together; the decode step of each request's first and second token. */
  async function tokenSteps(prompts: string[]): Promise<Array<{ first: number; second: number }>> {
    const steps = new Map<string, { first: number; second: number }>();
    const requests = prompts.map((p) => run(engine, { prompt: p, maxTokens: 2, sampling: greedy, ignoreEos: true }, (id, count) => {
      const entry = steps.get(id) ?? { first: -1, second: -1 };
      if (count === 1) entry.first = engine.stats().decodeSteps;
      if (count === 2) entry.second = engine.stats().decodeSteps;
      steps.set(id, entry);
    }));
    await Promise.all(requests.map((r) => r.result));
    return requests.map((r) => steps.get(r.id)!);
  }

  test("on the CPU a burst that fits two batches takes them full, and every stream of it starts when its last prompt ends", async () => {
    const prompts = Array.from({ length: 8 }, (_, i) => storyPrompt(i, 12));
    const total = prompts.reduce((sum, p) => sum + engine.tokenize(p).length, 0);
    expect(total).toBeGreaterThan(512);
    expect(total).toBeLessThanOrEqual(1024);
    const before = engine.stats().decodeSteps;
    const steps = await tokenSteps(prompts);
    // two full steps, not one a prompt; the first prompts' tokens wait for the second, so no stream pauses
    expect(steps.map((s) => s.first)).toEqual(prompts.map(() => before + 2));
    expect(steps.map((s) => s.second)).toEqual(prompts.map(() => before + 3));
  });

  test("on the CPU a short prompt arriving with longer ones beyond two batches gets its first token in a step of its own", async () => {
    // prompts of their own: none of their tokens is cached from the burst above
    const prompts = [storyPrompt(20, 12), ...[21, 22, 23].map((i) => storyPrompt(i, 50))];
    expect(prompts.reduce((sum, p) => sum + engine.tokenize(p).length, 0)).toBeGreaterThan(1024);
    const [short, ...long] = await tokenSteps(prompts);
    expect(short!.first).toBeLessThan(Math.min(...long.map((s) => s.first)));
  });

  test("a longer prompt reuses the cached prefix of an earlier one", async () => {
    const first = await run(engine, { prompt: `${prompt}Once upon a time`, maxTokens: 4, sampling: greedy }).result;
    const promptTokens = first.done!.usage.promptTokens;
    const second = await run(engine, { prompt: `${prompt}Once upon a time there lived a dragon in the hills`, maxTokens: 4, sampling: greedy }).result;
    expect(second.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(promptTokens - 1);
    expect(second.done!.usage.cachedPromptTokens).toBeLessThan(second.done!.usage.promptTokens);
  });

  test("the same prompt again is served from cache except its last token", async () => {
    const text = `${prompt}Repeat after me`;
    await run(engine, { prompt: text, maxTokens: 2, sampling: greedy }).result;
    const again = await run(engine, { prompt: text, maxTokens: 2, sampling: greedy }).result;
    expect(again.done!.usage.cachedPromptTokens).toBe(again.done!.usage.promptTokens - 1);
  });

  test("usage reports counts and timings", async () => {
    const r = await run(engine, { prompt, maxTokens: 8, sampling: greedy, ignoreEos: true }).result;
    const u = r.done!.usage;
    expect(u.completionTokens).toBe(8);
    expect(u.promptTokens).toBe(engine.tokenize(prompt).length);
    expect(u.timeToFirstTokenMs).toBeGreaterThan(0);
    expect(u.promptMs).toBeGreaterThan(0);
    expect(u.decodeMs).toBeGreaterThan(0);
  });

  test("a prompt longer than the context is refused with a clear error", async () => {
    const r = await run(engine, { prompt: "dragon ".repeat(600), maxTokens: 4 }).result;
    expect(r.error?.code).toBe("context_overflow");
    expect(r.error?.message).toContain("does not fit");
  });

  test("generation stops with length when the context is full", async () => {
    const r = await run(engine, { prompt, sampling: greedy, ignoreEos: true }).result;
    expect(r.done?.finishReason).toBe("length");
    // Every position of the context holds a token; the last sampled token needs no position of its own.
    expect(r.done!.usage.promptTokens + r.done!.usage.completionTokens).toBe(512 + 1);
  });
});

describe("prompt progress and long prefills", () => {
  // 32-token steps: a few hundred tokens of prompt span many steps
  let engine: Engine;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 2, contextPerSequence: 1024, batchSize: 32, threads: 2 });
  });
  afterAll(() => engine.dispose());
  const longPrompt = (tag: string) => `${tag} ${"the dragon flew over the hills and far away ".repeat(30)}`;

  test("a prompt spanning several steps reports progress in order up to the whole prompt, all before its first token", async () => {
    const order: string[] = [];
    const text = longPrompt("a");
    const total = engine.tokenize(text).length;
    const outcome = await run(engine, { prompt: text, maxTokens: 2, sampling: greedy, ignoreEos: true }, () => order.push("token")).result;
    const progress = outcome.progress ?? [];
    expect(progress.length).toBe(Math.ceil(total / 32));
    const processed = progress.map((p) => p.processed);
    expect([...processed].sort((a, b) => a - b)).toEqual(processed);
    expect(new Set(processed).size).toBe(processed.length);
    expect(progress.every((p) => p.total === total && p.cached === 0)).toBe(true);
    expect(processed.at(-1)).toBe(total);
    expect(outcome.tokens.length).toBe(2);
  });

  test("a prompt within one step reports nothing, unless progress is asked for: then once, complete", async () => {
    const plain = await run(engine, { prompt: "b short prompt", maxTokens: 1, sampling: greedy }).result;
    expect(plain.progress).toBeUndefined();
    const asked = await run(engine, { prompt: "c short prompt", maxTokens: 1, sampling: greedy, promptProgress: true }).result;
    const total = engine.tokenize("c short prompt").length;
    expect(asked.progress?.map((p) => [p.processed, p.total])).toEqual([[total, total]]);
  });

  test("a cached prefix counts as processed and as cached from the first report", async () => {
    const text = longPrompt("d");
    await run(engine, { prompt: text, maxTokens: 1, sampling: greedy }).result;
    const again = await run(engine, { prompt: `${text} and back again over the sea`, maxTokens: 1, sampling: greedy, promptProgress: true }).result;
    const first = again.progress![0]!;
    expect(first.cached).toBeGreaterThan(32);
    expect(first.processed).toBeGreaterThan(first.cached);
    expect(again.progress!.at(-1)!.processed).toBe(again.progress!.at(-1)!.total);
  });

  test("a short request sent during a long prefill gets its first token before the long prompt does", async () => {
    const firsts: string[] = [];
    let short: ReturnType<typeof run> | undefined;
    // sent at the long prompt's first progress report, as a client arriving while it is processed
    const long = run(engine, { prompt: longPrompt("e"), maxTokens: 1, sampling: greedy }, () => firsts.push("long"), () => {
      short ??= run(engine, { prompt: "f a short question", maxTokens: 1, sampling: greedy }, () => firsts.push("short"));
    });
    const longOutcome = await long.result;
    expect(short).toBeDefined();
    await short!.result;
    expect(longOutcome.progress!.at(-1)!.processed).toBe(longOutcome.progress!.at(-1)!.total);
    expect(firsts).toEqual(["short", "long"]);
  });

  test("the step in which a short prompt ends takes only a few tokens of the long prompt beside it", async () => {
    // 256-token steps: the short prompt's step holds CPU_PROMPT_FLUSH_TOKENS (64) tokens in all, not 256
    const wide = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 2, contextPerSequence: 2048, batchSize: 256, threads: 2 });
    try {
      const shortText = "g a short question";
      const shortTokens = wide.tokenize(shortText).length;
      let short: ReturnType<typeof run> | undefined;
      // sent at the long prompt's first report: it joins the next step
      const long = run(wide, { prompt: `${longPrompt("h")}${longPrompt("i")}${longPrompt("j")}`, maxTokens: 1, sampling: greedy }, undefined, () => {
        short ??= run(wide, { prompt: shortText, maxTokens: 1, sampling: greedy });
      });
      const processed = (await long.result).progress!.map((p) => p.processed);
      expect((await short!.result).tokens.length).toBe(1);
      expect(processed.length).toBeGreaterThan(3);
      // step 1: 256 tokens of the long prompt; step 2: the short prompt, then the long one up to 64 tokens in all; then 256 again
      expect(processed.slice(0, 3)).toEqual([256, 256 + 64 - shortTokens, 512 + 64 - shortTokens]);
    } finally {
      wide.dispose();
    }
  });
});

describe("busy queue", () => {
  test("requests over the queue bound get a distinct busy error", async () => {
    const engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 256, threads: 2, queueLimit: 2 });
    try {
      // The first request starts at once; the next two wait; the fourth is over the bound.
      const runs = Array.from({ length: 4 }, () => run(engine, { prompt, maxTokens: 4, sampling: greedy, ignoreEos: true }).result);
      const results = await Promise.all(runs);
      expect(results.slice(0, 3).every((r) => r.done?.finishReason === "length")).toBe(true);
      const refused = results.filter((r) => r.error);
      expect(refused.length).toBe(1);
      expect(refused.every((r) => r.error!.code === "busy")).toBe(true);
    } finally {
      engine.dispose();
    }
  });
});

describe("admission: least prompt work first, bounded", () => {
  // one sequence: every request after the first waits in the queue for it
  let engine: Engine;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 1024, threads: 2 });
  });
  afterAll(() => engine.dispose());
  const history = `${prompt}${"the dragon flew over the hills and far away ".repeat(20)}`;

  test("mostly cached turns go before a cold prompt that came first, which waits for at most MAX_OVERTAKEN of them", async () => {
    // the sequence holds the history; the warm turns add 1 to 6 words to it, the cold prompt is as long and new
    await run(engine, { prompt: history, maxTokens: 1, sampling: greedy }).result;
    const finished: string[] = [];
    const submit = (name: string, text: string) => run(engine, { prompt: text, maxTokens: 2, sampling: greedy, ignoreEos: true })
      .result.then((outcome) => { finished.push(name); return outcome; });
    // all queued in one tick, before the engine's next step: the cold prompt is the oldest
    const cold = submit("cold", `${"a knight rode across the fields and back ".repeat(20)}`);
    const warm = Array.from({ length: 6 }, (_, i) => submit(`warm${i + 1}`, `${history}${" again".repeat(i + 1)}`));
    const outcomes = await Promise.all([cold, ...warm]);
    expect(outcomes.every((o) => o.done?.finishReason === "length")).toBe(true);
    expect(finished).toEqual(["warm1", "warm2", "warm3", "warm4", "cold", "warm5", "warm6"]);
    const historyTokens = engine.tokenize(history).length;
    for (const outcome of outcomes.slice(1)) expect(outcome.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(historyTokens - 1);
  });
});

describe.each(["tiny-llama", "tiny-lfm2"] as const)("preemption: a warm turn takes the sequence of a cold prefill (%s)", (modelName) => {
  test("a mostly cached turn that arrives during a long cold prefill ends first; the cold prompt resumes where it stopped", async () => {
    // one sequence, 256-token steps: the cold prompt spans ~8 steps, the warm turn adds a word to a cached history
    // (on the hybrid model the cold prompt's recurrent state goes to the host cache mid-way and comes back whole)
    const options = { modelPath: await ensureModel(modelName), parallel: 1, contextPerSequence: 4096, batchSize: 256, threads: 2, cacheRamMiB: 64 };
    const engine = Engine.load(options);
    const alone = Engine.load(options);
    try {
      const history = `${prompt}${"the dragon flew over the hills and far away ".repeat(20)}`;
      const coldText = `${"a knight rode across the fields and back to the castle by the sea ".repeat(130)}`;
      expect(engine.tokenize(coldText).length).toBeGreaterThan(1500);
      await run(engine, { prompt: history, maxTokens: 1, sampling: greedy }).result;
      const finished: string[] = [];
      let warm: Promise<Outcome> | undefined;
      const cold = run(engine, { prompt: coldText, maxTokens: 4, sampling: greedy, ignoreEos: true }, undefined, () => {
        warm ??= run(engine, { prompt: `${history} again`, maxTokens: 2, sampling: greedy, ignoreEos: true }).result
          .then((outcome) => { finished.push("warm"); return outcome; });
      }).result.then((outcome) => { finished.push("cold"); return outcome; });
      const coldOutcome = await cold;
      const warmOutcome = await warm!;
      expect(finished).toEqual(["warm", "cold"]);
      expect(warmOutcome.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(engine.tokenize(history).length - 1);
      expect(engine.stats().preemptions).toBe(1);
      // its own work restored from the host cache is not reported as cached, and the tokens are those of a run alone
      expect(coldOutcome.done!.usage.cachedPromptTokens).toBeLessThan(8);
      expect(engine.stats().promptCache!.restored).toBeGreaterThanOrEqual(2);
      const reference = await run(alone, { prompt: coldText, maxTokens: 4, sampling: greedy, ignoreEos: true }).result;
      expect(coldOutcome.tokens).toEqual(reference.tokens);
    } finally {
      engine.dispose();
      alone.dispose();
    }
  }, 60_000);
});

describe("prefill order among admitted prompts", () => {
  test("a shorter prompt admitted during a long prefill is processed first, even when it spans several steps", async () => {
    // 32-token steps: the second prompt (~100 tokens) is "long" too, but has far less left than the first
    const engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 2, contextPerSequence: 2048, batchSize: 32, threads: 2 });
    try {
      const firsts: string[] = [];
      let medium: ReturnType<typeof run> | undefined;
      const mediumText = `m ${"a knight rode across the fields ".repeat(12)}`;
      expect(engine.tokenize(mediumText).length).toBeGreaterThan(64);
      const long = run(engine, { prompt: `l ${"the dragon flew over the hills and far away ".repeat(60)}`, maxTokens: 1, sampling: greedy },
        () => firsts.push("long"), () => {
          medium ??= run(engine, { prompt: mediumText, maxTokens: 1, sampling: greedy }, () => firsts.push("medium"));
        });
      await long.result;
      await medium!.result;
      expect(firsts).toEqual(["medium", "long"]);
    } finally {
      engine.dispose();
    }
  });
});

describe("hybrid LFM2 engine", () => {
  let engine: Engine;
  const lfmPrompt = "<|startoftext|><|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n";
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), parallel: 4, contextPerSequence: 512, threads: 2 });
  });
  afterAll(() => engine.dispose());

  // Co-batched sequences of a hybrid model must each give what the same prompt gives alone (ggml's AMX
  // kernels broke exactly this: every sequence but the first read past the weights; ffi/cpu-backends.ts).
  test("runs several sequences in parallel and each matches its single-sequence output", async () => {
    expect(engine.info.recurrentOrHybrid).toBe(true);
    const prompts = [lfmPrompt, `${lfmPrompt}1`, `${lfmPrompt}2`, lfmPrompt];
    const request = (p: string) => run(engine, { prompt: p, maxTokens: 16, sampling: greedy, ignoreEos: true, addSpecial: false }).result;
    const alone = [];
    for (const p of prompts) alone.push((await request(p)).tokens);
    const together = await Promise.all(prompts.map(request));
    expect(together.every((r) => r.tokens.length === 16)).toBe(true);
    expect(together.map((r) => r.tokens)).toEqual(alone);
  });

  test("continues a cached conversation but re-processes a diverging prompt", async () => {
    const first = await run(engine, { prompt: lfmPrompt, maxTokens: 6, sampling: greedy, ignoreEos: true, addSpecial: false }).result;
    // Prompt + the tokens the engine decoded (all generated but the last) is a continuation.
    const decoded = engine.tokenize(lfmPrompt, false).concat(first.tokens.slice(0, -1));
    const continued = await run(engine, { prompt: decoded.concat(engine.tokenize(" more", false)), maxTokens: 2, sampling: greedy }).result;
    expect(continued.done!.usage.cachedPromptTokens).toBe(decoded.length);
    // A prompt that diverges inside the cache cannot roll the recurrent state back: full re-processing.
    const diverged = await run(engine, { prompt: engine.tokenize(lfmPrompt, false).slice(0, -2), maxTokens: 2, sampling: greedy }).result;
    expect(diverged.done!.usage.cachedPromptTokens).toBe(0);
  });
});

describe("hybrid LFM2 checkpoints", () => {
  let engine: Engine;
  const longPrompt = `<|startoftext|><|im_start|>system\n${"You are a helpful assistant who answers briefly. ".repeat(6)}<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n`;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), parallel: 1, contextPerSequence: 1024, threads: 2 });
  });
  afterAll(() => engine.dispose());

  test("the same prompt again restores the checkpoint, decodes nothing of it, and generates the same tokens", async () => {
    const request = { prompt: longPrompt, maxTokens: 12, sampling: greedy, ignoreEos: true, addSpecial: false, logprobs: 2 };
    const first = await run(engine, request).result;
    expect(first.done!.usage.promptTokens).toBeGreaterThan(64);
    const stepsBefore = engine.stats().decodeSteps;
    const again = await run(engine, request).result;
    expect(again.done!.usage.cachedPromptTokens).toBe(again.done!.usage.promptTokens);
    expect(again.tokens).toEqual(first.tokens);
    // 12 tokens: the first from the checkpoint's logits, 11 decode steps after it.
    expect(engine.stats().decodeSteps - stepsBefore).toBe(11);
    expect(again.logprobs).toEqual(first.logprobs);
  });

  test("a next turn that diverges right after the prompt reuses the checkpoint", async () => {
    const first = await run(engine, { prompt: longPrompt, maxTokens: 6, sampling: greedy, ignoreEos: true, addSpecial: false }).result;
    const promptTokens = first.done!.usage.promptTokens;
    // A client re-renders the answer differently from the generated tokens: only the prompt is shared.
    const nextTurn = `${longPrompt}A different answer<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n`;
    const next = await run(engine, { prompt: nextTurn, maxTokens: 4, sampling: greedy, addSpecial: false }).result;
    expect(next.done!.usage.cachedPromptTokens).toBe(promptTokens);
    // And its output equals that of a fresh engine without any cache.
    const fresh = Engine.load({ modelPath: engine.info.path, parallel: 1, contextPerSequence: 1024, threads: 2 });
    try {
      const reference = await run(fresh, { prompt: nextTurn, maxTokens: 4, sampling: greedy, addSpecial: false }).result;
      expect(reference.done!.usage.cachedPromptTokens).toBe(0);
      expect(next.tokens).toEqual(reference.tokens);
    } finally {
      fresh.dispose();
    }
  });
});

describe("every generated model loads and runs", () => {
  for (const name of ["tiny-llama", "tiny-lfm2", "tiny-lfm2moe"] as const) {
    test(`${name} generates`, async () => {
      const engine = Engine.load({ modelPath: await ensureModel(name), parallel: 2, contextPerSequence: 256, threads: 2 });
      try {
        const r = await run(engine, { prompt: "Hello", maxTokens: 8, sampling: greedy, ignoreEos: true }).result;
        expect(r.error).toBeUndefined();
        expect(r.tokens).toHaveLength(8);
        expect(engine.info.chatTemplate).toBeString();
      } finally {
        engine.dispose();
      }
    });
  }

  test("tiny-bert embeds", async () => {
    const engine = Engine.load({ modelPath: await ensureModel("tiny-bert"), parallel: 1, contextPerSequence: 512, threads: 2, embeddings: true });
    try {
      const a = engine.embed("the quick brown fox").embedding;
      const b = engine.embed("the quick brown fox").embedding;
      const c = engine.embed("an entirely different sentence").embedding;
      expect(engine.embed("the quick brown fox").tokens).toBeGreaterThan(2);
      expect(a).toHaveLength(engine.info.embeddingSize);
      expect(Math.hypot(...a)).toBeCloseTo(1, 5);
      expect(b).toEqual(a);
      expect(c).not.toEqual(a);
    } finally {
      engine.dispose();
    }
  });
});
