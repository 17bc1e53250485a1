// Every sampler the chain can hold, on real libllama: each configuration builds and generates, and the
// constraining ones (logit bias, grammar, penalties) visibly constrain even a random-weight model.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import type { SamplerSettings } from "../../ffi/sampler.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

let engine: Engine;
let nextId = 0;

function generate(sampling: Partial<SamplerSettings>, maxTokens = 12): Promise<{ tokens: number[]; text: string; error?: string }> {
  return new Promise((resolve) => {
    const out = { tokens: [] as number[], text: "" };
    try {
      engine.submit({ id: `s${++nextId}`, prompt: "Hello there, how are", maxTokens, sampling }, (event) => {
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
  });
});
