// Stored conversations belong to the API key that made them: with two --api-key values, key B cannot
// continue (or read through its prompt) key A's Responses conversation (previous_response_id) on any
// profile, nor A's LM Studio /api/v1/chat thread on profile c. Another key's id answers exactly as an
// unknown id does. So do A's download jobs, and the web UI's request log lists each key's own requests.
// Real `llamux serve` processes (a store of their own, the local hub fixture), the pinned `openai`
// client, a generated model.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startHubServer, type HubServer } from "../fixtures/hub-server.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

const KEY_A = "alpha-secret";
const KEY_B = "beta-secret";
const PROFILES = ["a", "b", "c"] as const;
type Profile = (typeof PROFILES)[number];

const servers: Partial<Record<Profile, RunningServer>> = {};
const storeDir = mkdtempSync(join(tmpdir(), "llamux-key-store-"));
let hub: HubServer;
let model: string;

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
  hub = await startHubServer();
  const common = [model, "--served-model-name", "tiny", "--ctx-size", "512", "--parallel", "2", "--threads", "1", "--api-key", KEY_A, "--api-key", KEY_B];
  const env = { LLAMUX_MODELS: storeDir, HF_ENDPOINT: hub.url };
  const started = await Promise.all(PROFILES.map((profile) => startServer([...common, "--profile", profile], env)));
  PROFILES.forEach((profile, index) => (servers[profile] = started[index]));
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  await hub?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

const client = (profile: Profile, key: string) => new OpenAI({ baseURL: `${servers[profile]!.baseUrl}/v1`, apiKey: key, maxRetries: 0, timeout: 120_000 });

/** The error a call fails with (status and body), or a failure when it succeeds. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; error: unknown }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status, error: error.error };
    throw error;
  }
  throw new Error("expected the call to be refused");
}

describe.each(PROFILES)("profile %s: /v1/responses", (profile) => {
  test("key B gets a 404 for key A's previous_response_id, worded as for an unknown id; key A continues", async () => {
    const alpha = client(profile, KEY_A);
    const beta = client(profile, KEY_B);
    const first = await alpha.responses.create({ model: "tiny", input: "My secret word is pelican", max_output_tokens: 2 });
    expect(first.id).toStartWith("resp_");

    const stolen = await refusal(beta.responses.create({ model: "tiny", input: "What was my secret word?", previous_response_id: first.id, max_output_tokens: 2 }));
    const unknownId = `resp_${"0".repeat(first.id.length - 5)}`;
    const unknown = await refusal(beta.responses.create({ model: "tiny", input: "x", previous_response_id: unknownId, max_output_tokens: 2 }));
    expect(stolen.status).toBe(404);
    expect(JSON.stringify(stolen.error)).toBe(JSON.stringify(unknown.error).replace(unknownId, first.id));
    // Streamed, the refusal comes before any event.
    const streamed = await refusal(beta.responses.create({ model: "tiny", input: "x", previous_response_id: first.id, max_output_tokens: 2, stream: true }));
    expect(streamed.status).toBe(404);

    // The owner still continues the conversation, and so does a chain from B's own response.
    const continued = await alpha.responses.create({ model: "tiny", input: "And now?", previous_response_id: first.id, max_output_tokens: 2 });
    expect(continued.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    const own = await beta.responses.create({ model: "tiny", input: "Hello", max_output_tokens: 2 });
    expect((await beta.responses.create({ model: "tiny", input: "Again", previous_response_id: own.id, max_output_tokens: 2 })).id).toStartWith("resp_");
    expect((await refusal(alpha.responses.create({ model: "tiny", input: "x", previous_response_id: own.id, max_output_tokens: 2 }))).status).toBe(404);
  }, 120_000);
});

describe("profile c: /api/v1/chat threads", () => {
  const chat = (key: string, body: Record<string, unknown>) => fetch(`${servers.c!.baseUrl}/api/v1/chat`, {
    method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "tiny", max_output_tokens: 2, ...body }),
  });

  test("key B gets a 404 for key A's previous_response_id, worded as for an unknown id; key A continues", async () => {
    const first = await chat(KEY_A, { input: "My secret word is pelican" });
    expect(first.status).toBe(200);
    const { response_id: id, stats } = (await first.json()) as { response_id: string; stats: { input_tokens: number } };
    expect(id).toStartWith("resp_");

    const stolen = await chat(KEY_B, { input: "What was my secret word?", previous_response_id: id });
    const unknownId = `resp_${"0".repeat(id.length - 5)}`;
    const unknown = await chat(KEY_B, { input: "x", previous_response_id: unknownId });
    expect(stolen.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await stolen.text()).toBe((await unknown.text()).replace(unknownId, id));
    const streamed = await chat(KEY_B, { input: "x", previous_response_id: id, stream: true });
    expect(streamed.status).toBe(404);
    await streamed.arrayBuffer();

    const continued = await chat(KEY_A, { input: "And now?", previous_response_id: id });
    expect(continued.status).toBe(200);
    expect(((await continued.json()) as { stats: { input_tokens: number } }).stats.input_tokens).toBeGreaterThan(stats.input_tokens);
  }, 120_000);
});

describe("profile c: download jobs and the request log", () => {
  const call = (key: string, method: "GET" | "POST", path: string, body?: unknown) => fetch(`${servers.c!.baseUrl}${path}`, {
    method, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

  test("key B gets a 404 for key A's download job, worded as for an unknown id; key A reads it", async () => {
    // A repository the hub does not have: the job fails, and is read back all the same.
    const started = await call(KEY_A, "POST", "/api/v1/models/download", { model: "llamux-test/Secret-Model-GGUF" });
    expect(started.status).toBe(200);
    const { job_id: jobId } = (await started.json()) as { job_id: string };
    expect(jobId).toMatch(/^job_[0-9a-f]{10}$/);

    const own = await call(KEY_A, "GET", `/api/v1/models/download/status/${jobId}`);
    expect(own.status).toBe(200);
    expect(((await own.json()) as { job_id: string }).job_id).toBe(jobId);
    const stolen = await call(KEY_B, "GET", `/api/v1/models/download/status/${jobId}`);
    const unknownId = "job_0000000000";
    const unknown = await call(KEY_B, "GET", `/api/v1/models/download/status/${unknownId}`);
    expect(stolen.status).toBe(404);
    expect(await stolen.text()).toBe((await unknown.text()).replace(unknownId, jobId));
  });

  test("GET /api/v1/server/requests lists the caller's own requests only", async () => {
    type Logged = { id: number; path: string };
    const requests = async (key: string) => ((await (await call(key, "GET", "/api/v1/server/requests?after=0")).json()) as { requests: Logged[] }).requests;
    const marker = `/api/v0/models/only-key-a-${Date.now()}`;
    expect((await call(KEY_A, "GET", marker)).status).toBe(404);
    expect((await call(KEY_B, "GET", "/api/v0/models")).status).toBe(200);

    const seenByA = (await requests(KEY_A)).map((r) => r.path);
    const seenByB = (await requests(KEY_B)).map((r) => r.path);
    expect(seenByA).toContain(marker);
    expect(seenByA).not.toContain("/api/v0/models");
    expect(seenByB).toContain("/api/v0/models");
    expect(seenByB).not.toContain(marker);
  });
});
