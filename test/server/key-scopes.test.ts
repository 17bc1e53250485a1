// Named keys' scopes and limits on every API, in-process (app.request, no model: a refusal comes before
// the route runs, and an admitted request with an empty body stops at validation). A missing scope is a 403
// and a reached limit a 429 with Retry-After, each in the API's own error shape: Ollama's string, OpenAI's
// envelope (vLLM's exception names), Anthropic's error types, LM Studio's REST v1 words.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { ModelManager } from "../../src/engine/model-manager.ts";
import { KeyAccess } from "../../src/keys/key-access.ts";
import { KeyRing } from "../../src/keys/key-ring.ts";
import { createApp } from "../../src/server/app.ts";
import { LmStudioModelService } from "../../src/server/lmstudio/model-service.ts";
import { ModelService } from "../../src/server/model-service.ts";
import { profiles, type ProfileName } from "../../src/server/profiles/index.ts";
import { serverOptions } from "../../src/server/server-options.ts";
import { createVllmMetrics } from "../../src/server/vllm/metrics.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { makeKeys, writeKeys } from "../keys/key-fixture.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-key-scopes-"));
const manager = new ModelManager();
let ring: KeyRing;
let secrets: Record<string, string>;
let model: string;

beforeAll(async () => {
  const keys = await makeKeys([
    { name: "chatter", scopes: ["chat"], rpm: 1 },
    { name: "embedder", scopes: ["embeddings"] },
    { name: "boss", scopes: ["admin", "chat"] },
    { name: "narrow", scopes: ["chat"], models: ["llama3.2", "hf.co/org/*"] },
  ]);
  model = await ensureModel("tiny-llama");
  secrets = keys.secrets;
  writeKeys(join(dir, "keys.json"), keys.entries);
  ring = new KeyRing(join(dir, "keys.json"));
});
afterAll(async () => {
  await manager.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh app (and usage book, so rpm starts afresh) of one profile over the keys. */
function app(profile: ProfileName, plainKeys: string[] = []): { app: Hono; access: KeyAccess } {
  const access = new KeyAccess({ ring, plainKeys });
  const options = { parallel: 1, contextPerSequence: 256 };
  const models = profile === "c"
    ? new LmStudioModelService(manager, [], { ...options, store: new ModelStore(join(dir, "store")) })
    : new ModelService(manager, [{ path: model, name: "tiny" }], options);
  const metrics = profile === "b" ? createVllmMetrics(manager, models, access.usage) : {};
  return { app: createApp({ profile: profiles[profile], models, ...metrics }, serverOptions({ keyAccess: access })), access };
}

const call = async (target: Hono, method: string, path: string, key: string, body?: unknown) => {
  const response = await target.request(path, {
    method, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, json, retryAfter: response.headers.get("retry-after") };
};

describe("a missing scope is a 403 naming it, in each API's shape", () => {
  const scopeMessage = (key: string, scope: string) => expect.stringContaining(`Missing scope "${scope}": API key "${key}"`);

  test("Ollama's native routes: {error: string}", async () => {
    const { app: a } = app("a");
    const pull = await call(a, "POST", "/api/pull", secrets.chatter!, { model: "x" });
    expect(pull).toMatchObject({ status: 403, json: { error: scopeMessage("chatter", "admin") } });
    expect((await call(a, "DELETE", "/api/delete", secrets.embedder!, { model: "x" })).status).toBe(403);
    expect((await call(a, "POST", "/api/chat", secrets.embedder!, {})).json).toEqual({ error: scopeMessage("embedder", "chat") });
    // allowed: an admin reaches the route (and its validation), any key lists
    expect((await call(a, "POST", "/api/pull", secrets.boss!, {})).status).toBe(400);
    expect((await call(a, "GET", "/api/tags", secrets.embedder!)).status).toBe(200);
  });

  test("OpenAI's envelope on every profile (vLLM's exception names on b)", async () => {
    const a = await call(app("a").app, "POST", "/v1/embeddings", secrets.chatter!, {});
    expect(a).toMatchObject({ status: 403, json: { error: { message: scopeMessage("chatter", "embeddings"), type: "permission_error", param: null, code: "missing_scope" } } });
    const b = await call(app("b").app, "POST", "/v1/embeddings", secrets.chatter!, {});
    expect(b).toMatchObject({ status: 403, json: { error: { type: "PermissionDeniedError", code: "missing_scope" } } });
    const c = await call(app("c").app, "POST", "/v1/chat/completions", secrets.embedder!, {});
    expect(c).toMatchObject({ status: 403, json: { error: { type: "permission_error", code: "missing_scope" } } });
    expect((await call(app("b").app, "POST", "/v1/embeddings", secrets.embedder!, {})).status).toBe(400);
  });

  test("Anthropic's error types on /v1/messages", async () => {
    const refused = await call(app("b").app, "POST", "/v1/messages", secrets.embedder!, {});
    expect(refused).toMatchObject({ status: 403, json: { type: "error", error: { type: "permission_error", message: scopeMessage("embedder", "chat") } } });
  });

  test("LM Studio's REST v1 words; model management needs admin", async () => {
    const { app: c } = app("c");
    for (const path of ["/api/v1/models/load", "/api/v1/models/unload", "/api/v1/models/download"]) {
      const refused = await call(c, "POST", path, secrets.chatter!, {});
      expect(refused).toMatchObject({ status: 403, json: { error: { type: "permission_denied", code: "missing_scope", message: scopeMessage("chatter", "admin") } } });
    }
    expect((await call(c, "GET", "/api/v1/models/download/status/job_0123456789", secrets.chatter!)).status).toBe(403);
    expect((await call(c, "POST", "/api/v1/models/load", secrets.boss!, {})).status).toBe(400);
    expect((await call(c, "GET", "/api/v1/models", secrets.chatter!)).status).toBe(200);
  });

  test("the web UI's routes and /metrics: hub search and deletes need admin, metrics name every key", async () => {
    const { app: b } = app("b");
    expect((await call(b, "POST", "/api/v1/models/delete", secrets.chatter!, {})).status).toBe(403);
    expect((await call(b, "GET", "/api/v1/hub/search?q=x", secrets.chatter!)).status).toBe(403);
    expect((await call(b, "GET", "/api/v1/server/status", secrets.chatter!)).json).toMatchObject({ api_key_required: true });
    expect((await call(b, "GET", "/metrics", secrets.chatter!)).status).toBe(403);
    expect((await call(b, "GET", "/metrics", secrets.boss!)).status).toBe(200);
  });

  test("a plain --api-key key may do everything; an unknown or missing key is a 401", async () => {
    const { app: a } = app("a", ["plain-secret"]);
    expect((await call(a, "POST", "/api/pull", "plain-secret", {})).status).toBe(400);
    expect((await call(a, "POST", "/api/pull", "wrong", {})).status).toBe(401);
    expect((await a.request("/api/tags")).status).toBe(401);
  });
});

describe("a reached limit is a 429 with Retry-After, in each API's shape", () => {
  // rpm 1: the first request is admitted (and stops at validation), the second is refused.
  const twice = async (profile: ProfileName, path: string) => {
    const { app: target } = app(profile);
    expect((await call(target, "POST", path, secrets.chatter!, {})).status).toBe(400);
    const refused = await call(target, "POST", path, secrets.chatter!, {});
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    return refused.json;
  };
  const message = expect.stringContaining('Rate limit reached for API key "chatter" on requests per minute (rpm): limit 1, used 1');

  test("Ollama: {error: string}", async () => {
    expect(await twice("a", "/api/chat")).toEqual({ error: message });
  });
  test("OpenAI: code rate_limit_exceeded (vLLM: RateLimitError)", async () => {
    expect(await twice("a", "/v1/chat/completions")).toEqual({ error: { message, type: "rate_limit_error", param: null, code: "rate_limit_exceeded" } });
    expect(await twice("b", "/v1/completions")).toMatchObject({ error: { type: "RateLimitError", code: "rate_limit_exceeded" } });
  });
  test("Anthropic: rate_limit_error", async () => {
    expect(await twice("c", "/v1/messages")).toEqual({ type: "error", error: { type: "rate_limit_error", message } });
  });
  test("LM Studio REST v1: rate_limit_exceeded", async () => {
    expect(await twice("c", "/api/v1/chat")).toMatchObject({ error: { type: "rate_limit_exceeded", code: "rate_limit_exceeded", message } });
  });
  test("the refusals are counted, and reading routes are not limited", async () => {
    const { app: a, access } = app("a");
    await call(a, "POST", "/api/chat", secrets.chatter!, {});
    await call(a, "POST", "/api/chat", secrets.chatter!, {});
    expect((await call(a, "GET", "/api/tags", secrets.chatter!)).status).toBe(200);
    expect(access.usage.get("chatter")).toMatchObject({ requests: 1, rateLimited: 1 });
  });
});

test("a model outside the key's models list is a 403 before anything loads", async () => {
  const { app: a } = app("a");
  const refused = await call(a, "POST", "/v1/chat/completions", secrets.narrow!, { model: "tiny", messages: [{ role: "user", content: "Hi" }], max_tokens: 1 });
  expect(refused).toMatchObject({ status: 403, json: { error: { message: 'API key "narrow" may not use model "tiny" (its models: llama3.2, hf.co/org/*)' } } });
  expect((await call(a, "POST", "/api/generate", secrets.narrow!, { model: "tiny", prompt: "Hi" })).json).toEqual({ error: expect.stringContaining("may not use model") });
  expect(manager.loadedEngines()).toHaveLength(0);
});

describe("GET /v1/usage", () => {
  test("a key reads its own usage; an admin reads everyone's; another key's name is unknown to a non-admin", async () => {
    const { app: a } = app("a");
    await call(a, "POST", "/api/chat", secrets.chatter!, {});
    const own = await call(a, "GET", "/v1/usage", secrets.chatter!);
    expect(own.json).toMatchObject({ object: "list", data: [{ key: "chatter", requests: 1, limits: { scopes: ["chat"], rpm: 1 }, revoked: false }] });
    expect((own.json as { data: unknown[] }).data).toHaveLength(1);
    expect((await call(a, "GET", "/v1/usage?key=boss", secrets.chatter!)).status).toBe(404);
    const all = await call(a, "GET", "/v1/usage", secrets.boss!);
    expect((all.json as { data: Array<{ key: string }> }).data.map((entry) => entry.key)).toEqual(["boss", "chatter", "embedder", "narrow"]);
    expect((await call(a, "GET", "/v1/usage?key=chatter", secrets.boss!)).json).toMatchObject({ data: [{ key: "chatter", requests: 1 }] });
  });
});
