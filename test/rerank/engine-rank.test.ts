// The engine's rank pooling on a random-weight BERT reranker: one score per document, batched across
// sequences, the same score whatever batch a document lands in, and embeddings refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

let engine: Engine;

beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-bert-rerank"), parallel: 8, contextPerSequence: 512, threads: 2, embeddings: true, rank: true });
});
afterAll(() => engine?.dispose());

describe("Engine.rank", () => {
  test("loads as a reranker", () => {
    expect(engine.info.reranker).toBe(true);
    expect(engine.info.sequences).toBe(8);
  });

  test("one finite score per document, independent of batching", () => {
    const documents = Array.from({ length: 19 }, (_, i) => `document number ${i} about ${i % 3 === 0 ? "cats" : "the weather"}`);
    const { scores, tokens } = engine.rank("what do cats eat?", documents);
    expect(scores).toHaveLength(19);
    expect(tokens).toHaveLength(19);
    for (const score of scores) expect(Number.isFinite(score)).toBe(true);
    expect(new Set(scores.map((s) => s.toFixed(6))).size).toBeGreaterThan(1);
    // Scored alone, each document gets the score it got in a batch of eight.
    for (const i of [0, 7, 8, 18]) {
      const alone = engine.rank("what do cats eat?", [documents[i]!]);
      expect(alone.scores[0]!).toBeCloseTo(scores[i]!, 4);
      expect(alone.tokens[0]).toBe(tokens[i]);
    }
  });

  test("the pair is [CLS] query [SEP] document as the vocabulary asks", () => {
    const query = engine.tokenize("what do cats eat?", false, false).length;
    const document = engine.tokenize("fish", false, false).length;
    const { tokens } = engine.rank("what do cats eat?", ["fish"]);
    expect(tokens[0]).toBe(query + document + 2);
  });

  test("a pair longer than the model takes is an overflow, not a crash", () => {
    expect(() => engine.rank("q", ["word ".repeat(600)])).toThrow(/more than the reranker's input of 512 tokens/);
    expect(engine.rank("q", ["still works"]).scores).toHaveLength(1);
  });

  test("a reranker produces no embeddings", () => {
    expect(() => engine.embed("text")).toThrow(/is a reranker/);
  });
});
