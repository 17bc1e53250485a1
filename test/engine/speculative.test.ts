// Speculative decoding in the engine, on real libllama and generated models: greedy output identical
// with and without speculation (draft model, the target as its own draft, n-gram lookup), alone and
// batched, on the llama and the hybrid LFM2 architectures (whose recurrent state must roll back);
// acceptance counts per request; n-gram drafts on output that copies the prompt; incompatible drafts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import type { EngineEvent, EngineOptions, GenerateRequest, RequestUsage } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

interface Outcome { tokens: number[]; usage?: RequestUsage; error?: string; finishReason?: string }

let nextId = 0;
function run(engine: Engine, request: Omit<GenerateRequest, "id">): Promise<Outcome> {
  const outcome: Outcome = { tokens: [] };
  return new Promise((resolve) => {
    engine.submit({ ...request, id: `s${++nextId}` }, (event: EngineEvent) => {
      if (event.type === "token" && event.token >= 0) outcome.tokens.push(event.token);
      else if (event.type === "done") resolve({ ...outcome, usage: event.usage, finishReason: event.finishReason });
      else if (event.type === "error") resolve({ ...outcome, error: event.message });
    });
  });
}

const greedy = { temperature: 0 };
const prompts = [
  "<|im_start|>user\nTell me a story about a dragon<|im_end|>\n<|im_start|>assistant\n",
  "Once upon a time in a land far away",
  "The quick brown fox jumps over the lazy dog. The quick brown fox",
  "1 2 3 4 5 6 7 8 9 10 11 12",
];
const base = (modelPath: string): EngineOptions => ({ modelPath, parallel: 4, contextPerSequence: 512, threads: 1 });

async function outputs(engine: Engine, maxTokens: number, extra: Partial<GenerateRequest> = {}): Promise<Outcome[]> {
  return Promise.all(prompts.map((prompt) => run(engine, { prompt, maxTokens, sampling: greedy, ignoreEos: true, ...extra })));
}

for (const target of ["tiny-llama", "tiny-lfm2"] as const) {
  describe(`speculative decoding on ${target}`, () => {
    let plain: Engine;
    let reference: Outcome[];
    let referenceAlone: Outcome;
    beforeAll(async () => {
      plain = Engine.load(base(await ensureModel(target)));
      referenceAlone = await run(plain, { prompt: prompts[0]!, maxTokens: 48, sampling: greedy, ignoreEos: true });
      reference = await outputs(plain, 48);
    });
    afterAll(() => plain.dispose());

    const variants: Array<[string, () => Promise<EngineOptions["speculative"]>]> = [
      ["a smaller draft model", async () => ({ method: "draft", draftModelPath: await ensureModel(`${target}-draft`), maxDraftTokens: 4 })],
      ["the target as its own draft", async () => ({ method: "draft", draftModelPath: await ensureModel(target), maxDraftTokens: 4 })],
      ["n-gram lookup", async () => ({ method: "ngram", maxDraftTokens: 4 })],
    ];
    for (const [name, speculative] of variants) {
      test(`${name}: greedy output is token for token the plain engine's, alone and four batched`, async () => {
        const engine = Engine.load({ ...base(await ensureModel(target)), speculative: await speculative() });
        try {
          const alone = await run(engine, { prompt: prompts[0]!, maxTokens: 48, sampling: greedy, ignoreEos: true });
          expect(alone.error).toBeUndefined();
          expect(alone.tokens).toEqual(referenceAlone.tokens);
          const batched = await outputs(engine, 48);
          for (let i = 0; i < prompts.length; i++) expect(batched[i]!.tokens).toEqual(reference[i]!.tokens);
          // every request reports its drafts; accepted ones never exceed drafted ones
          for (const result of [alone, ...batched]) {
            expect(result.usage!.draftTokens).toBeGreaterThanOrEqual(result.usage!.acceptedDraftTokens!);
          }
          const stats = engine.stats();
          // On a hybrid target n-gram drafts need a match in all four sequences in the same step (lockstep);
          // the copy test below makes them match.
          if (!(target === "tiny-lfm2" && name === "n-gram lookup")) expect(stats.draftTokens).toBeGreaterThan(0);
          if (name === "the target as its own draft") {
            // a draft identical to the target proposes what greedy decoding picks: (nearly) all accepted
            expect(alone.usage!.acceptedDraftTokens!).toBeGreaterThan(0.8 * alone.usage!.draftTokens!);
            expect(stats.decodeSteps).toBeLessThan(plain.stats().decodeSteps);
          }
        } finally {
          engine.dispose();
        }
      }, 60_000);
    }

    test("sampling with a seed gives the same tokens with the target as its own draft (each token is drawn from the target's distribution)", async () => {
      const sampling = { temperature: 1, topK: 0, topP: 1, minP: 0, seed: 11 };
      const expected = await run(plain, { prompt: prompts[1]!, maxTokens: 32, ignoreEos: true, sampling });
      const engine = Engine.load({ ...base(await ensureModel(target)), speculative: { method: "draft", draftModelPath: await ensureModel(target) } });
      try {
        const got = await run(engine, { prompt: prompts[1]!, maxTokens: 32, ignoreEos: true, sampling });
        expect(got.tokens).toEqual(expected.tokens);
        expect(got.usage!.draftTokens).toBeGreaterThan(0);
      } finally {
        engine.dispose();
      }
    }, 60_000);
  });
}

describe("a draft catching up on more tokens than one batch holds", () => {
  test("four sequences batched with a 16-token batch: the plain engine's tokens", async () => {
    const model = await ensureModel("tiny-lfm2");
    const options = { ...base(model), batchSize: 16 };
    const plain = Engine.load(options);
    const engine = Engine.load({ ...options, speculative: { method: "draft", draftModelPath: await ensureModel("tiny-lfm2-draft"), maxDraftTokens: 4 } });
    try {
      const expected = await outputs(plain, 24);
      const got = await outputs(engine, 24);
      for (let i = 0; i < prompts.length; i++) {
        expect(got[i]!.error).toBeUndefined();
        expect(got[i]!.tokens).toEqual(expected[i]!.tokens);
      }
      expect(engine.stats().draftTokens).toBeGreaterThan(0);
    } finally {
      plain.dispose();
      engine.dispose();
    }
  }, 60_000);
});

describe("limits with drafts", () => {
  test("generation stops with length when the context is full, as without drafts", async () => {
    const model = await ensureModel("tiny-llama");
    const options = { modelPath: model, parallel: 1, contextPerSequence: 128, threads: 1 };
    const plain = Engine.load(options);
    const speculative = Engine.load({ ...options, speculative: { method: "draft", draftModelPath: model, maxDraftTokens: 8 } });
    try {
      const request = { prompt: prompts[0]!, sampling: greedy, ignoreEos: true };
      const expected = await run(plain, request);
      const got = await run(speculative, request);
      expect(got.finishReason).toBe("length");
      expect(got.usage!.promptTokens + got.usage!.completionTokens).toBe(speculative.info.contextPerSequence + 1);
      expect(got.tokens).toEqual(expected.tokens);
      expect(got.usage!.acceptedDraftTokens).toBeGreaterThan(0);
      // max_tokens bounds drafts too
      const limited = await run(speculative, { ...request, maxTokens: 10 });
      expect(limited.tokens).toEqual(expected.tokens.slice(0, 10));
    } finally {
      plain.dispose();
      speculative.dispose();
    }
  }, 60_000);
});

describe("back-off", () => {
  test("at near-zero acceptance a sequence drafts rarely (rejected drafts stay a few percent of the output), and the next request starts backed off", async () => {
    // a random-weight draft agrees with the random-weight target by chance only
    const engine = Engine.load({ ...base(await ensureModel("tiny-llama")), speculative: { method: "draft", draftModelPath: await ensureModel("tiny-llama-draft"), maxDraftTokens: 8 } });
    try {
      const result = await run(engine, { prompt: prompts[1]!, maxTokens: 400, sampling: greedy, ignoreEos: true });
      const { draftTokens, acceptedDraftTokens, completionTokens } = result.usage!;
      expect(draftTokens! - acceptedDraftTokens!).toBeLessThanOrEqual(0.05 * completionTokens);
      // the next request starts inside that back-off (its last pause, 256 tokens from the round at ~240): no round in 64 tokens
      const next = await run(engine, { prompt: prompts[2]!, maxTokens: 64, sampling: greedy, ignoreEos: true });
      expect(next.usage!.draftTokens).toBe(0);
    } finally {
      engine.dispose();
    }
  }, 120_000);
});

/**
 * A request whose output copies a passage of its prompt. A random-weight model copies nothing by itself,
 * so the copy is forced: a grammar spells the passage again and a logit bias leaves only the passage's
 * own tokens, so the output has the same tokens as the prompt's passage (as a model quoting its input would).
 */
function copyRequest(engine: Engine): { ids: number[]; request: Omit<GenerateRequest, "id"> } {
  const passage = " alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau";
  const ids = engine.tokenize(passage, false, false);
  // and end-of-generation, which the grammar asks for once the passage is complete
  const allowed = new Set([...ids, engine.info.eosToken]);
  const logitBias: Array<[number, number]> = [];
  for (let t = 0; t < engine.info.vocabularySize; t++) if (!allowed.has(t)) logitBias.push([t, -Infinity]);
  const sampling = { temperature: 0, grammar: `root ::= ${JSON.stringify(passage)}`, logitBias };
  return { ids, request: { prompt: `Repeat:${passage}\nAgain:`, maxTokens: ids.length + 4, sampling } };
}

describe("n-gram speculation", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = Engine.load({ ...base(await ensureModel("tiny-llama")), speculative: { method: "ngram", maxDraftTokens: 8 } });
  });
  afterAll(() => engine.dispose());

  test("output that copies the prompt is drafted from it and accepted", async () => {
    const { ids, request } = copyRequest(engine);
    const result = await run(engine, request);
    expect(result.error).toBeUndefined();
    expect(result.tokens).toEqual(Array.from(ids));
    const usage = result.usage!;
    // after the first few tokens every step drafts the rest of the passage from the prompt
    expect(usage.acceptedDraftTokens).toBeGreaterThanOrEqual(ids.length - 4);
    expect(usage.acceptedDraftTokens! / usage.draftTokens!).toBeGreaterThan(0.6);
  });

  test("a request can turn speculation off (draftTokens 0): nothing is drafted for it", async () => {
    const result = await run(engine, { prompt: prompts[2]!, maxTokens: 24, ignoreEos: true, sampling: greedy, draftTokens: 0 });
    expect(result.usage!.draftTokens).toBe(0);
  });
});

describe("n-gram speculation on a hybrid target (lockstep)", () => {
  test("four copying requests batched have their drafts accepted and give the plain engine's tokens (which steps draft: speculation-plan.test.ts)", async () => {
    const model = await ensureModel("tiny-lfm2");
    const plain = Engine.load(base(model));
    const engine = Engine.load({ ...base(model), speculative: { method: "ngram", maxDraftTokens: 4 } });
    try {
      const copy = copyRequest(engine);
      const ids = copy.ids;
      // The model may spell the passage with other pieces of it than the prompt's tokens (greedy decides),
      // so the output stops short of the passage's end, where the grammar would want LFM2's end of text.
      const request = { ...copy.request, maxTokens: ids.length - 2 };
      const expected = await run(plain, request);
      expect(expected.error).toBeUndefined();
      const results = await Promise.all(Array.from({ length: 4 }, () => run(engine, request)));
      for (const result of results) {
        expect(result.tokens).toEqual(expected.tokens);
        // How far each step drafts is weighed against the engine's measured step costs (planning/speculation-cost.ts), so how
        // much is accepted depends on the machine; that drafts are accepted does not.
        expect(result.usage!.acceptedDraftTokens).toBeGreaterThan(0);
      }
      expect(engine.stats().decodeSteps).toBeLessThan(plain.stats().decodeSteps);
    } finally {
      plain.dispose();
      engine.dispose();
    }
  }, 60_000);
});

describe("incompatible drafts are refused at load", () => {
  test("a draft with another vocabulary", async () => {
    const load = async () => Engine.load({ ...base(await ensureModel("tiny-llama")), speculative: { method: "draft", draftModelPath: await ensureModel("tiny-lfm2") } });
    await expect(load()).rejects.toThrow(/Cannot use ".*tiny-lfm2.*" as draft model for ".*tiny-llama.*": (its vocabulary|its BOS token|token \d+ is)/);
  });

  test("a draft larger than the target", async () => {
    const load = async () => Engine.load({ ...base(await ensureModel("tiny-llama-draft")), speculative: { method: "draft", draftModelPath: await ensureModel("tiny-llama") } });
    await expect(load()).rejects.toThrow(/it is larger than the target/);
  });

  test("bad settings", async () => {
    const load = async () => Engine.load({ ...base(await ensureModel("tiny-llama")), speculative: { method: "ngram", maxDraftTokens: 0 } });
    await expect(load()).rejects.toThrow(/number of draft tokens must be an integer from 1 to 32/);
  });
});
