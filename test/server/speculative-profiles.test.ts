// Each way of asking for speculative decoding, end to end on real `llamux serve` processes: vLLM's
// --speculative-config (n-gram and draft model) and llama-server's --spec-type draft-simple on profile b, with the
// counts in /metrics; LM Studio's per-request draft_model and its stats on profile c; Modelfile DRAFT,
// /api/create draft_files and draft_num_predict on profile a; and refusals with the reason.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");
const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const messages = [{ role: "user" as const, content: "Count: one two three one two three one two three" }];
let target: string, draft: string, otherVocabulary: string;
const stores: string[] = [];

function isolatedStore(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "llamux-spec-"));
  stores.push(dir);
  return { LLAMUX_MODELS: dir, OLLAMA_MODELS: dir };
}

function metric(text: string, name: string): number {
  return text.split("\n").filter((line) => line.startsWith(`${name}{`)).reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
}

beforeAll(async () => {
  [target, draft, otherVocabulary] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-llama-draft"), ensureModel("tiny-lfm2")]);
});
afterAll(() => {
  for (const dir of stores) rmSync(dir, { recursive: true, force: true });
});

const common = ["--threads", "1", "--ctx-size", "512", "--parallel", "2"];

describe("profile b", () => {
  const servers: RunningServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  for (const [name, flags] of [
    ["--speculative-config with the n-gram method", ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3}']],
    ["--speculative-config with a draft model (the target itself: every draft accepted)", ["--speculative-config", "DRAFT_SELF"]],
    // its older names (--model-draft, --draft-max) give the same options: test/cli/speculative-flags.test.ts
    ["llama-server's --spec-type draft-simple", ["--spec-type", "draft-simple", "--spec-draft-model", "DRAFT_SMALL", "--spec-draft-n-max", "3"]],
  ] as const) {
    test(`${name}: the server speculates and /metrics counts drafted and accepted tokens`, async () => {
      const resolved = flags.map((flag) => flag === "DRAFT_SELF" ? JSON.stringify({ model: target, num_speculative_tokens: 4 }) : flag === "DRAFT_SMALL" ? draft : flag);
      const server = await startServer(["--profile", "b", target, ...common, ...resolved], isolatedStore());
      servers.push(server);
      const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "x" });
      // long enough for the random model's output to repeat itself, which the n-gram lookup then drafts
      const reply = await client.chat.completions.create({ model: target, messages, max_tokens: 96, temperature: 0, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(reply.choices[0]!.message.content).toBeDefined();
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      const drafted = metric(metrics, "vllm:spec_decode_num_draft_tokens_total");
      const accepted = metric(metrics, "vllm:spec_decode_num_accepted_tokens_total");
      expect(drafted).toBeGreaterThan(0);
      expect(accepted).toBeLessThanOrEqual(drafted);
      if (name.includes("the target itself")) expect(accepted).toBeGreaterThan(0.8 * drafted);
    }, 120_000);
  }

  test("bad --speculative-config and an incompatible --model-draft are refused with the reason", async () => {
    const bad = Bun.spawnSync([process.execPath, main, "serve", "--profile", "b", target, "--speculative-config", '{"method": "eagle"}'], { env: { ...process.env, ...isolatedStore() } });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr.toString()).toContain('method "eagle" is not supported');
    const server = await startServer(["--profile", "b", target, ...common, "--model-draft", otherVocabulary], isolatedStore());
    servers.push(server);
    const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: target, messages, max_tokens: 4 }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toMatch(/as draft model for .*: its BOS token/);
  }, 120_000);
});

describe("profile c: draft_model per request", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(["--profile", "c", target, ...common], isolatedStore());
  });
  afterAll(() => server.stop());

  test("stats report the draft model and its drafted, accepted and rejected tokens", async () => {
    const post = (body: object) => fetch(`${server.baseUrl}/api/v0/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: target, messages, max_tokens: 32, temperature: 0, ...body }),
    });
    const plain = await (await post({})).json() as { choices: Array<{ message: { content: string } }>; stats: Record<string, unknown> };
    expect(plain.stats.total_draft_tokens_count).toBeUndefined();
    const speculative = await (await post({ draft_model: target })).json() as typeof plain;
    const stats = speculative.stats as Record<string, number>;
    expect(stats.draft_model).toBeDefined();
    expect(stats.total_draft_tokens_count).toBeGreaterThan(0);
    expect(stats.accepted_draft_tokens_count! + stats.rejected_draft_tokens_count!).toBe(stats.total_draft_tokens_count!);
    expect(stats.ignored_draft_tokens_count).toBe(0);
    // greedy output does not change with a draft
    expect(speculative.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
  }, 120_000);

  test("a draft_model with another vocabulary is refused with the reason", async () => {
    const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: target, messages, max_tokens: 4, draft_model: otherVocabulary }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("as draft model for");
  }, 120_000);
});

describe("profile a: Modelfile DRAFT, /api/create draft_files, draft_num_predict", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(["--profile", "a", ...common], { ...isolatedStore(), LLAMUX_LOG_LEVEL: "info" });
  }, 60_000);
  afterAll(() => server.stop());

  test("a model created with a draft loads it and speculates; greedy output is unchanged", async () => {
    const base = server.baseUrl;
    const digests: string[] = [];
    for (const file of [target, draft]) {
      const bytes = new Uint8Array(readFileSync(file));
      digests.push(sha256(bytes));
      expect((await fetch(`${base}/api/blobs/${sha256(bytes)}`, { method: "POST", body: bytes })).status).toBe(201);
    }
    const [targetDigest, draftDigest] = digests as [string, string];
    const create = (body: object) => fetch(`${base}/api/create`, { method: "POST", body: JSON.stringify({ stream: false, ...body }) });
    expect((await create({ model: "spec-json", files: { "model.gguf": targetDigest }, draft_files: { "draft.gguf": draftDigest } })).status).toBe(200);
    expect((await create({ model: "spec-modelfile", modelfile: `FROM @${targetDigest}\nDRAFT @${draftDigest}` })).status).toBe(200);
    const same = await create({ model: "spec-same", files: { "model.gguf": targetDigest }, draft_files: { "draft.gguf": targetDigest } });
    expect(JSON.stringify(await same.json())).toContain("the draft model must not be the model itself");

    const chat = async (model: string, options: object) => {
      const response = await fetch(`${base}/api/chat`, { method: "POST", body: JSON.stringify({ model, messages, stream: false, options: { temperature: 0, num_predict: 24, ...options } }) });
      expect(response.status).toBe(200);
      return ((await response.json()) as { message: { content: string } }).message.content;
    };
    const plain = await chat(target, {});
    expect(await chat("spec-json", { draft_num_predict: 3 })).toBe(plain);
    expect(await chat("spec-modelfile", { draft_num_predict: 0 })).toBe(plain);
    expect(server.stderr()).toContain("speculative decoding with draft model");
  }, 180_000);
});
