// /rerank, /v1/rerank, /v2/rerank and /score over real HTTP on loopback, with a random-weight BERT
// reranker (rank pooling over a classifier head), a chat model and an embedding model beside it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureModel } from "../../scripts/gen-models.ts";
import type { ProfileName } from "../../src/server/profiles/profile.ts";
import { startProfileApps, type ProfileApps } from "../fixtures/profile-apps.ts";
import { MAX_RERANK_DOCUMENTS } from "../../src/server/rerank/rerank-core.ts";
import { sigmoid } from "../../src/server/rerank/score-activation.ts";

const RERANKER = "org/tiny-reranker";
const CHAT = "org/tiny-chat";
const EMBEDDER = "org/tiny-embed";
let apps: ProfileApps;
let base: ProfileApps["base"];

beforeAll(async () => {
  const [rerankPath, chatPath, embedPath] = await Promise.all([ensureModel("tiny-bert-rerank"), ensureModel("tiny-llama"), ensureModel("tiny-bert")]);
  apps = startProfileApps([{ path: rerankPath, name: RERANKER }, { path: chatPath, name: CHAT }, { path: embedPath, name: EMBEDDER }], { parallel: 1, contextPerSequence: 512, threads: 2 });
  base = apps.base;
}, 120_000);

afterAll(() => apps.stop());

async function post(profile: ProfileName, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${base[profile]}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

const query = "What is the capital of France?";
const documents = ["Paris is the capital of France.", "Bananas are yellow.", "The Eiffel Tower is in Paris.", "Berlin is in Germany.", "Cats sleep a lot."];

interface RerankResult { index: number; relevance_score: number; document?: { text: string } }

function expectSorted(results: RerankResult[]): void {
  for (let i = 1; i < results.length; i++) expect(results[i - 1]!.relevance_score).toBeGreaterThanOrEqual(results[i]!.relevance_score);
}

describe("POST /rerank (profile b)", () => {
  test("every document scored once, sorted by score, documents returned, usage counted", async () => {
    const { status, json } = await post("b", "/rerank", { model: RERANKER, query, documents });
    expect(status).toBe(200);
    expect(json.model).toBe(RERANKER);
    expect(json.id).toStartWith("rerank-");
    const results = json.results as RerankResult[];
    expect(results.map((r) => r.index).sort()).toEqual([0, 1, 2, 3, 4]);
    expectSorted(results);
    for (const r of results) {
      expect(Number.isFinite(r.relevance_score)).toBe(true);
      expect(r.document).toEqual({ text: documents[r.index]! });
    }
    expect(new Set(results.map((r) => r.relevance_score)).size).toBeGreaterThan(1);
    expect(json.usage.total_tokens).toBeGreaterThan(documents.length * 3);
    expect(json.usage.prompt_tokens).toBe(json.usage.total_tokens);
  });

  test("scores agree with /score for the same pairs, and with each document scored alone", async () => {
    const ranked = (await post("b", "/rerank", { model: RERANKER, query, documents })).json.results as RerankResult[];
    const scored = await post("b", "/score", { model: RERANKER, text_1: query, text_2: documents });
    expect(scored.status).toBe(200);
    expect(scored.json.object).toBe("list");
    expect(scored.json.data).toHaveLength(documents.length);
    for (const r of ranked) {
      expect(scored.json.data[r.index].index).toBe(r.index);
      expect(scored.json.data[r.index].object).toBe("score");
      expect(scored.json.data[r.index].score).toBeCloseTo(r.relevance_score, 4);
    }
    const alone = await post("b", "/rerank", { model: RERANKER, query, documents: [documents[3]] });
    expect(alone.json.results[0].relevance_score).toBeCloseTo(ranked.find((r) => r.index === 3)!.relevance_score, 4);
  });

  test("top_n keeps the best N; return_documents false leaves documents out", async () => {
    const all = (await post("b", "/v1/rerank", { model: RERANKER, query, documents })).json.results as RerankResult[];
    const { json } = await post("b", "/v1/rerank", { model: RERANKER, query, documents, top_n: 2, return_documents: false });
    expect(json.results).toHaveLength(2);
    expect(json.results.map((r: RerankResult) => r.index)).toEqual(all.slice(0, 2).map((r) => r.index));
    for (const r of json.results) expect(r.document).toBeUndefined();
    const beyond = await post("b", "/v1/rerank", { model: RERANKER, query, documents, top_n: 50 });
    expect(beyond.json.results).toHaveLength(documents.length);
  });

  test("Jina's shape: documents as {text} objects", async () => {
    const { status, json } = await post("b", "/v1/rerank", { model: RERANKER, query, documents: documents.map((text) => ({ text })), top_n: 3 });
    expect(status).toBe(200);
    expect(json.results).toHaveLength(3);
    expectSorted(json.results);
    for (const r of json.results) expect(r.document.text).toBe(documents[r.index]!);
  });

  test("Cohere's /v2/rerank: results without documents unless asked, and Cohere's meta", async () => {
    const { status, json } = await post("b", "/v2/rerank", { model: RERANKER, query, documents, top_n: 3 });
    expect(status).toBe(200);
    expect(typeof json.id).toBe("string");
    expect(json.meta.api_version.version).toBe("2");
    expect(json.results).toHaveLength(3);
    expectSorted(json.results);
    for (const r of json.results) expect(Object.keys(r).sort()).toEqual(["index", "relevance_score"]);
    const withDocs = await post("b", "/v2/rerank", { model: RERANKER, query, documents, return_documents: true });
    for (const r of withDocs.json.results) expect(r.document.text).toBe(documents[r.index]!);
  });

  test("/score pairs equal-length lists one to one", async () => {
    const { status, json } = await post("b", "/v1/score", { model: RERANKER, text_1: [query, "fruit colours"], text_2: [documents[0], documents[1]] });
    expect(status).toBe(200);
    expect(json.data.map((d: { index: number }) => d.index)).toEqual([0, 1]);
    const second = await post("b", "/score", { model: RERANKER, text_1: "fruit colours", text_2: documents[1] });
    expect(second.json.data[0].score).toBeCloseTo(json.data[1].score, 4);
    const mismatch = await post("b", "/score", { model: RERANKER, text_1: ["a", "b"], text_2: ["c", "d", "e"] });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.message).toContain("text_1");
  });

  test("empty documents, too many documents and an over-long pair are 400s in vLLM's shape", async () => {
    const empty = await post("b", "/rerank", { model: RERANKER, query, documents: [] });
    expect(empty.status).toBe(400);
    expect(empty.json.error).toMatchObject({ type: "BadRequestError", code: 400, param: "documents" });
    const many = await post("b", "/rerank", { model: RERANKER, query, documents: Array.from({ length: MAX_RERANK_DOCUMENTS + 1 }, () => "x") });
    expect(many.status).toBe(400);
    expect(many.json.error.message).toContain(String(MAX_RERANK_DOCUMENTS));
    const long = await post("b", "/rerank", { model: RERANKER, query, documents: ["short", "word ".repeat(700)] });
    expect(long.status).toBe(400);
    expect(long.json.error.message).toContain("documents[1]");
    const missing = await post("b", "/rerank", { model: RERANKER, documents });
    expect(missing.status).toBe(400);
    // The engine is still serving.
    expect((await post("b", "/rerank", { model: RERANKER, query, documents: ["ok"] })).status).toBe(200);
  });

  test("a chat model and an embedding model are refused with a 400 naming the model", async () => {
    for (const model of [CHAT, EMBEDDER]) {
      const { status, json } = await post("b", "/rerank", { model, query, documents });
      expect(status).toBe(400);
      expect(json.error.message).toContain(`Model "${model}" is not a reranker`);
    }
    const embed = await post("b", "/v1/embeddings", { model: RERANKER, input: "text" });
    expect(embed.status).toBe(400);
  });
});

describe("score scales: vLLM's activation on profile b, llama-server's raw logits on a and c", () => {
  /** Scores by document index from a rerank answer. */
  const byIndex = (results: RerankResult[]) => results.slice().sort((x, y) => x.index - y.index).map((r) => r.relevance_score);
  let raw: number[];
  beforeAll(async () => {
    raw = byIndex((await post("a", "/v1/rerank", { model: RERANKER, query, documents })).json.results);
  });

  test("profiles a and c answer the same raw logits, unbounded", async () => {
    expect(byIndex((await post("c", "/v1/rerank", { model: RERANKER, query, documents })).json.results)).toEqual(raw);
    // The classifier's logit, not a probability: the formula below tells them apart.
    for (const score of raw) expect(Math.abs(sigmoid(score) - score)).toBeGreaterThan(1e-3);
  });

  for (const path of ["/rerank", "/v1/rerank", "/v2/rerank"]) {
    test(`profile b ${path}: sigmoid of the raw score, in [0, 1]; use_activation false gives the raw score`, async () => {
      const activated = byIndex((await post("b", path, { model: RERANKER, query, documents })).json.results);
      activated.forEach((score, i) => {
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
        expect(Math.abs(score - sigmoid(raw[i]!))).toBeLessThan(1e-6);
      });
      const plain = byIndex((await post("b", path, { model: RERANKER, query, documents, use_activation: false })).json.results);
      plain.forEach((score, i) => expect(Math.abs(score - raw[i]!)).toBeLessThan(1e-6));
    });
  }

  for (const path of ["/score", "/v1/score"]) {
    test(`profile b ${path}: sigmoid of the raw score; use_activation false gives the raw score`, async () => {
      const scored = (await post("b", path, { model: RERANKER, text_1: query, text_2: documents })).json.data as { score: number }[];
      scored.forEach(({ score }, i) => expect(Math.abs(score - sigmoid(raw[i]!))).toBeLessThan(1e-6));
      const plain = (await post("b", path, { model: RERANKER, text_1: query, text_2: documents, use_activation: false })).json.data as { score: number }[];
      plain.forEach(({ score }, i) => expect(Math.abs(score - raw[i]!)).toBeLessThan(1e-6));
    });
  }

  test("use_activation true on profile a applies the sigmoid there too; a wrong type is a 400", async () => {
    const activated = byIndex((await post("a", "/v1/rerank", { model: RERANKER, query, documents, use_activation: true })).json.results);
    activated.forEach((score, i) => expect(Math.abs(score - sigmoid(raw[i]!))).toBeLessThan(1e-6));
    const wrong = await post("b", "/rerank", { model: RERANKER, query, documents, use_activation: "yes" });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toContain("use_activation");
  });
});

describe("/v1/rerank on profiles a and c (an extension)", () => {
  for (const profile of ["a", "c"] as const) {
    test(`profile ${profile}: ranks, and refuses a chat model in the OpenAI error shape`, async () => {
      const { status, json } = await post(profile, "/v1/rerank", { model: RERANKER, query, documents, top_n: 2 });
      expect(status).toBe(200);
      expect(json.results).toHaveLength(2);
      expectSorted(json.results);
      const refused = await post(profile, "/v1/rerank", { model: CHAT, query, documents });
      expect(refused.status).toBe(400);
      expect(refused.json.error.type).toBe("invalid_request_error");
      expect(refused.json.error.message).toContain("is not a reranker");
    });
  }

  test("the vLLM-only routes are not on profiles a and c", async () => {
    for (const profile of ["a", "c"] as const) {
      const response = await fetch(`${base[profile]}/score`, { method: "POST", body: "{}" });
      expect(response.status).toBe(404);
    }
  });
});
