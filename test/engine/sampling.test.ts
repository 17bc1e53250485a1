// Every sampler the chain can hold, on real libllama: each configuration builds and generates, and the
// constraining ones (logit bias, grammar, penalties) visibly constrain even a random-weight model.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import type { SamplerSettings } from "../../ffi/sampler.ts";
import type { EngineEvent, GenerateRequest } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

let engine: Engine;
let nextId = 0;

interface Generated { tokens: number[]; text: string; error?: string; events: EngineEvent[] }

function generate(sampling: Partial<SamplerSettings>, maxTokens = 12, extra: Partial<GenerateRequest> = {}): Promise<Generated> {
  return new Promise((resolve) => {
    const out: Generated = { tokens: [], text: "", events: [] };
    try {
      engine.submit({ id: `s${++nextId}`, prompt: "Hello there, how are", maxTokens, sampling, ...extra }, (event) => {
        out.events.push(event);
        if (event.type === "token") {
          if (event.token >= 0) out.tokens.push(event.token);
          out.text += event.text;
        } else resolve(event.type === "error" ? { ...out, error: event.message } : out);
      });
    } catch (error) {
      resolve({ ...out, error: (error as Error).message });
    }
  });
}

beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 2, contextPerSequence: 512, threads: 2 });
});
afterAll(() => engine.dispose());

describe("sampler chain", () => {
  const configurations: Record<string, Partial<SamplerSettings>> = {
    "greedy": { temperature: 0 },
    "top-k/top-p/min-p": { temperature: 0.7, topK: 20, topP: 0.9, minP: 0.05, seed: 1 },
    "typical": { temperature: 0.7, typicalP: 0.8, seed: 1 },
    "penalties": { temperature: 0.7, repeatPenalty: 1.3, frequencyPenalty: 0.5, presencePenalty: 0.5, seed: 1 },
    "DRY": { temperature: 0.7, dryMultiplier: 0.8, seed: 1 },
    "XTC": { temperature: 0.7, xtcProbability: 0.5, xtcThreshold: 0.1, seed: 1 },
    "mirostat 1": { temperature: 0.7, mirostat: 1, seed: 1 },
    "mirostat 2": { temperature: 0.7, mirostat: 2, seed: 1 },
  };
  for (const [name, sampling] of Object.entries(configurations)) {
    test(`${name} generates`, async () => {
      const result = await generate(sampling);
      expect(result.error).toBeUndefined();
      expect(result.tokens.length).toBeGreaterThan(0);
    });
  }

  test("a large logit bias forces a token under greedy sampling", async () => {
    const [forced] = engine.tokenize(" banana", false, false);
    const result = await generate({ temperature: 0, logitBias: [[forced!, 100]] }, 5);
    expect(result.tokens).toEqual(Array(5).fill(forced));
  });

  test("repeat penalty breaks a forced repetition", async () => {
    const [forced] = engine.tokenize(" banana", false, false);
    const result = await generate({ temperature: 0, logitBias: [[forced!, 2]], repeatPenalty: 1e9, repeatLastN: 64 }, 6);
    expect(result.tokens.filter((t) => t === forced).length).toBeLessThanOrEqual(1);
  });

  test("a GBNF grammar constrains random weights", async () => {
    for (let seed = 1; seed <= 4; seed++) {
      const result = await generate({ temperature: 1, seed, grammar: 'root ::= ("yes" | "no") "." ' }, 20);
      expect(result.text).toMatch(/^(yes|no)\.$/);
    }
  });

  test("an invalid grammar is refused with an error, not a crash", async () => {
    const result = await generate({ grammar: "root ::= (" });
    expect(result.error).toContain("grammar");
    const leftRecursive = await generate({ grammar: 'root ::= root "a"' });
    expect(leftRecursive.error).toContain("left recursion");
  });

  test("a grammar at a dead end ends the request with an error instead of aborting the engine", async () => {
    // No token's text is a NUL character, so after "a" every candidate is ruled out.
    const result = await generate({ temperature: 1, seed: 3, grammar: 'root ::= "a" "\\x00"' });
    expect(result.text).toBe("a");
    expect(result.error).toContain("grammar allows no next token");
    const after = await generate({ temperature: 0 }, 3, { ignoreEos: true });
    expect(after.tokens).toHaveLength(3);
  });

  test("under a grammar, special tokens it accepts by their text are shown in the output", async () => {
    // "<|im_start|>" is a control token of the Qwen2 vocabulary; the grammar matches it by its text.
    const [control] = engine.tokenize("<|im_start|>", false, true);
    const result = await generate({ temperature: 0, logitBias: [[control!, 100]], grammar: 'root ::= "<|im_start|>" "x"' }, 4);
    expect(result.tokens[0]).toBe(control!);
    expect(result.text).toBe("<|im_start|>x");
  });

  test("a stop token id ends generation before it, and is reported", async () => {
    const free = await generate({ temperature: 0 }, 12, { ignoreEos: true });
    const stopToken = free.tokens[4]!;
    const first = free.tokens.indexOf(stopToken);
    const stopped = await generate({ temperature: 0 }, 12, { ignoreEos: true, stopTokenIds: [stopToken] });
    expect(stopped.tokens).toEqual(free.tokens.slice(0, first));
    expect(stopped.events.at(-1)).toMatchObject({ type: "done", finishReason: "stop", stopToken });
  });

  test("min_tokens holds back end-of-generation until enough tokens exist", async () => {
    const eos = engine.info.eosToken;
    const eager = await generate({ temperature: 0, logitBias: [[eos, 100]] }, 20);
    expect(eager.tokens).toEqual([]);
    const held = await generate({ temperature: 0, logitBias: [[eos, 100]] }, 20, { minTokens: 5 });
    expect(held.tokens).toHaveLength(5);
    expect(held.events.at(-1)).toMatchObject({ type: "done", finishReason: "stop" });
  });

  test("logprobs report the sampled token and the top alternatives", async () => {
    const result = await generate({ temperature: 0 }, 4, { logprobs: 3, ignoreEos: true });
    const tokenEvents = result.events.filter((e) => e.type === "token" && e.token >= 0) as Extract<EngineEvent, { type: "token" }>[];
    expect(tokenEvents).toHaveLength(4);
    for (const event of tokenEvents) {
      const lp = event.logprobs!;
      expect(lp.token).toBe(event.token);
      expect(lp.top).toHaveLength(3);
      // Greedy picks the most likely token, so it heads the top list with the same logprob.
      expect(lp.top[0]!.token).toBe(event.token);
      expect(lp.top[0]!.logprob).toBeCloseTo(lp.logprob, 6);
      expect(lp.top[0]!.logprob).toBeGreaterThanOrEqual(lp.top[1]!.logprob);
      expect(lp.top[1]!.logprob).toBeGreaterThanOrEqual(lp.top[2]!.logprob);
      expect(lp.top.reduce((sum, t) => sum + Math.exp(t.logprob), 0)).toBeLessThanOrEqual(1 + 1e-6);
      expect(lp.text).toBe(engine.detokenize([event.token]));
    }
  });
});
