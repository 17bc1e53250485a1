// Rerank scores against llama.cpp's own `llama-server --rerank`, built from the same pinned source, on
// the random-weight BERT reranker: profiles a and c answer llama-server's raw scores; profile b answers
// vLLM's, the sigmoid of them (and the raw ones with use_activation false).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureModel } from "../../scripts/gen-models.ts";
import { sigmoid } from "../../src/server/rerank/score-activation.ts";
import { ensureLlamaTool } from "../fixtures/llama-tools.ts";
import { startProfileApps, type ProfileApps } from "../fixtures/profile-apps.ts";
import { freePort } from "../server/serve-fixture.ts";

const RERANKER = "org/tiny-reranker";
const query = "What is the capital of France?";
const documents = ["Paris is the capital of France.", "Bananas are yellow.", "The Eiffel Tower is in Paris.", "Berlin is in Germany."];
let apps: ProfileApps;
let oracle: ReturnType<typeof Bun.spawn>;
let oracleUrl: string;

beforeAll(async () => {
  const [model, server] = await Promise.all([ensureModel("tiny-bert-rerank"), ensureLlamaTool("llama-server")]);
  apps = startProfileApps([{ path: model, name: RERANKER }], { parallel: 1, contextPerSequence: 512, threads: 2 });
  const port = await freePort();
  oracleUrl = `http://127.0.0.1:${port}`;
  oracle = Bun.spawn([server, "-m", model, "--rerank", "--host", "127.0.0.1", "--port", String(port), "-t", "2", "-c", "512", "-b", "512", "-ub", "512"], { stdout: "ignore", stderr: "ignore" });
  // llama-server answers /health with 503 while it loads, then 200.
  for (let tries = 0; ; tries++) {
    const ready = await fetch(`${oracleUrl}/health`).then((r) => r.ok, () => false);
    if (ready) break;
    if (tries > 600 || oracle.exitCode !== null) throw new Error("llama-server did not start");
    await Bun.sleep(100);
  }
}, 1_800_000);

afterAll(async () => {
  oracle?.kill();
  await apps?.stop();
});

async function scores(base: string, body: Record<string, unknown> = {}): Promise<number[]> {
  const response = await fetch(`${base}/v1/rerank`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model: RERANKER, query, documents, ...body }) });
  expect(response.status).toBe(200);
  const results = ((await response.json()) as { results: Array<{ index: number; relevance_score: number }> }).results;
  return results.sort((a, b) => a.index - b.index).map((r) => r.relevance_score);
}

describe("/v1/rerank against llama-server --rerank", () => {
  test("profiles a and c: llama-server's scores; profile b: their sigmoid, or them with use_activation false", async () => {
    const expected = await scores(oracleUrl);
    expect(expected).toHaveLength(documents.length);
    for (const [profile, transform] of [["a", (x: number) => x], ["c", (x: number) => x], ["b", sigmoid]] as const) {
      const got = await scores(apps.base[profile]);
      got.forEach((score, i) => expect(Math.abs(score - transform(expected[i]!))).toBeLessThan(1e-5));
    }
    const raw = await scores(apps.base.b, { use_activation: false });
    raw.forEach((score, i) => expect(Math.abs(score - expected[i]!)).toBeLessThan(1e-5));
  });
});
