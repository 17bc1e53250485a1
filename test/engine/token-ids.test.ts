// The engine's own check of token ids (defence in depth behind the routes and the engine client): an id
// outside the vocabulary is refused at submit, before llama_decode, so it neither aborts the process
// (llama.cpp's token_to_piece) nor fails the batch the other sequences share.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { EngineError, type EngineEvent, type GenerateRequest } from "../../src/engine/types.ts";
import { firstOutOfVocabulary, tokenIdProblem } from "../../src/engine/token-ids.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { LLM, SamplingParams } from "../../src/sdk/index.ts";

let nextId = 0;
function run(engine: Engine, request: Omit<GenerateRequest, "id">): Promise<EngineEvent> {
  return new Promise((resolve, reject) => {
    let tokens = 0;
    try {
      engine.submit({ ...request, id: `k${++nextId}` }, (event) => {
        if (event.type === "token") tokens++;
        else resolve(event.type === "done" ? { ...event, usage: { ...event.usage, completionTokens: tokens } } : event);
      });
    } catch (error) {
      reject(error);
    }
  });
}

test("firstOutOfVocabulary finds negative, too large and non-integer ids", () => {
  expect(firstOutOfVocabulary([0, 1, 99], 100)).toBeUndefined();
  expect(firstOutOfVocabulary([0, 100], 100)).toBe(100);
  expect(firstOutOfVocabulary([-5, 3], 100)).toBe(-5);
  expect(firstOutOfVocabulary([1.5], 100)).toBe(1.5);
  expect(tokenIdProblem([7, 999999999], 100, "context")).toBe("Token id 999999999 in context is out of vocabulary: the model has 100 tokens (ids 0 to 99)");
});

describe("engine", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 2, contextPerSequence: 256, threads: 2 });
  });
  afterAll(() => engine?.dispose());

  test("a token prompt or logit bias outside the vocabulary is refused at submit; the sequence in flight finishes", async () => {
    const running = run(engine, { prompt: "Once upon a time", maxTokens: 24, ignoreEos: true, sampling: { temperature: 0 } });
    const size = engine.info.vocabularySize;
    for (const request of [
      { prompt: [1, 999999999] },
      { prompt: [-5] },
      { prompt: [size] },
      { prompt: "hi", sampling: { logitBias: [[size + 3, 1]] as Array<[number, number]> } },
    ]) {
      let refused: unknown;
      try {
        await run(engine, { ...request, maxTokens: 2 });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(EngineError);
      expect((refused as EngineError).code).toBe("invalid_request");
      expect((refused as EngineError).message).toContain("is out of vocabulary");
    }
    const done = await running;
    expect(done.type).toBe("done");
    expect(done.type === "done" && done.finishReason).toBe("length");
    expect(done.type === "done" && done.usage.completionTokens).toBe(24);
  });

  test("detokenize refuses an id outside the vocabulary instead of aborting the process", () => {
    expect(() => engine.detokenize([999999999])).toThrow(/Token id 999999999 in the tokens is out of vocabulary/);
    expect(() => engine.detokenize([-1])).toThrow(EngineError);
    expect(engine.detokenize([engine.info.vocabularySize - 1]).length).toBeGreaterThanOrEqual(0);
  });
});

describe("SDK", () => {
  test("LLM.generate with prompt_token_ids outside the vocabulary rejects, and the model keeps serving", async () => {
    await using llm = new LLM({ model: await ensureModel("tiny-llama"), max_model_len: 256, max_num_seqs: 2 });
    const params = new SamplingParams({ max_tokens: 3, ignore_eos: true, seed: 1 });
    await expect(llm.generate({ prompt_token_ids: [1, 999999999] }, params, { progress: false })).rejects.toThrow(/Token id 999999999 .* is out of vocabulary/);
    await expect(llm.generate({ prompt_token_ids: [-5] }, params, { progress: false })).rejects.toThrow(/Token id -5 .* is out of vocabulary/);
    const [ok] = await llm.generate({ prompt_token_ids: [1, 2, 3] }, params, { progress: false });
    expect(ok!.outputs[0]!.token_ids).toHaveLength(3);
  }, 120_000);
});
