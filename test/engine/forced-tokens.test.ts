// Scoring given tokens instead of sampling (GenerateRequest.forcedTokens), in-process on real libllama:
// each forced token comes back with the log-probability the model gives it, the same number greedy
// decoding reports for the same token, on an attention model and on a hybrid (LFM2) one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import type { EngineEvent, GenerateRequest } from "../../src/engine/types.ts";

interface Scored { tokens: number[]; logprobs: number[]; done?: Extract<EngineEvent, { type: "done" }>; error?: string }

let nextId = 0;
function run(engine: Engine, request: Omit<GenerateRequest, "id">): Promise<Scored> {
  const out: Scored = { tokens: [], logprobs: [] };
  return new Promise((resolve) => {
    try {
      engine.submit({ ...request, id: `forced-${++nextId}` }, (event) => {
        if (event.type === "token" && event.token >= 0) {
          out.tokens.push(event.token);
          out.logprobs.push(event.logprobs!.logprob);
        } else if (event.type === "done") {
          out.done = event;
          resolve(out);
        } else if (event.type === "error") {
          out.error = event.message;
          resolve(out);
        }
      });
    } catch (error) {
      out.error = (error as Error).message;
      resolve(out);
    }
  });
}

for (const name of ["tiny-llama", "tiny-lfm2"] as const) {
  describe(`forced tokens on ${name}`, () => {
    let engine: Engine;
    beforeAll(async () => {
      engine = Engine.load({ modelPath: await ensureModel(name), parallel: 4, contextPerSequence: 256, threads: 2 });
    }, 120_000);
    afterAll(() => engine?.dispose());

    test("a greedy continuation scored again gets the log-probabilities greedy decoding reported", async () => {
      const prompt = "The answer to the question is";
      const greedy = await run(engine, { prompt, maxTokens: 5, ignoreEos: true, logprobs: 0, sampling: { temperature: 0 } });
      expect(greedy.tokens).toHaveLength(5);
      const scored = await run(engine, { prompt, forcedTokens: greedy.tokens });
      expect(scored.error).toBeUndefined();
      expect(scored.tokens).toEqual(greedy.tokens);
      scored.logprobs.forEach((logprob, i) => expect(logprob).toBeCloseTo(greedy.logprobs[i]!, 3));
      expect(scored.done!.finishReason).toBe("length");
      expect(scored.done!.usage.completionTokens).toBe(5);
    });

    test("any tokens, end-of-generation ones included, are scored in full; several requests batch together", async () => {
      const eos = engine.info.eosToken;
      const candidates = [[eos], [11, 12, eos], [300, 301], [42]];
      const results = await Promise.all(candidates.map((forcedTokens) => run(engine, { prompt: "Pick one:", forcedTokens })));
      results.forEach((result, i) => {
        expect(result.tokens).toEqual(candidates[i]!);
        for (const logprob of result.logprobs) {
          expect(logprob).toBeLessThanOrEqual(0);
          expect(Number.isFinite(logprob)).toBe(true);
        }
      });
      // The first token's score depends on the prompt only: [42] and a longer list starting with 42 agree.
      const longer = await run(engine, { prompt: "Pick one:", forcedTokens: [42, 43] });
      expect(longer.logprobs[0]).toBeCloseTo(results[3]!.logprobs[0]!, 3);
    });

    test("bad forced tokens are refused; the engine keeps serving", async () => {
      expect((await run(engine, { prompt: "x", forcedTokens: [] })).error).toContain("empty list of forced tokens");
      expect((await run(engine, { prompt: "x", forcedTokens: [engine.info.vocabularySize] })).error).toContain("out of vocabulary");
      expect((await run(engine, { prompt: "x", forcedTokens: new Array(300).fill(5) })).error).toContain("do not fit the context");
      expect((await run(engine, { prompt: "x", forcedTokens: [5] })).tokens).toEqual([5]);
    });
  });
}
