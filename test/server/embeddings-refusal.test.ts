// A chat-only model asked for embeddings answers as each anchor does (the refusal comes from the model
// file's header, before any engine loads, so the apps run in-process): Ollama 501 "this model does not
// support embeddings" on every route, vLLM a 400 in its error shape, LM Studio its 404 "Model is not
// embedding". The real-server side of profile a is in ollama/ollama-port.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hono } from "hono";
import { ensureModel } from "../../scripts/gen-models.ts";
import { ModelManager } from "../../src/engine/model-manager.ts";
import { createApp } from "../../src/server/app.ts";
import { LmStudioModelService } from "../../src/server/lmstudio/model-service.ts";
import { ModelService } from "../../src/server/model-service.ts";
import { profiles } from "../../src/server/profiles/index.ts";
import { ModelStore } from "../../src/store/model-store.ts";

const MODEL = "org/tiny-chat";
let manager: ModelManager;
let storeDir: string;
const apps: Record<"a" | "b" | "c", Hono> = {} as never;

beforeAll(async () => {
  const path = await ensureModel("tiny-llama");
  storeDir = mkdtempSync(join(tmpdir(), "llamux-embed-refusal-"));
  manager = new ModelManager();
  const served = [{ path, name: MODEL }];
  const options = { parallel: 1, contextPerSequence: 256 };
  apps.a = createApp({ profile: profiles.a, models: new ModelService(manager, served, options) });
  apps.b = createApp({ profile: profiles.b, models: new ModelService(manager, served, options) });
  apps.c = createApp({ profile: profiles.c, models: new LmStudioModelService(manager, served, { ...options, store: new ModelStore(storeDir) }) });
});

afterAll(async () => {
  await manager.stopAll();
  rmSync(storeDir, { recursive: true, force: true });
});

const post = (app: Hono, path: string, body: unknown) =>
  app.request(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

describe("a chat-only model asked for embeddings", () => {
  test("profile a: 501 on /api/embed, /api/embeddings and /v1/embeddings, in Ollama's words", async () => {
    for (const [path, body] of [["/api/embed", { model: MODEL, input: ["x"] }], ["/api/embeddings", { model: MODEL, prompt: "x" }]] as const) {
      const response = await post(apps.a, path, body);
      expect(response.status).toBe(501);
      expect(await response.json()).toEqual({ error: "this model does not support embeddings" });
    }
    const v1 = await post(apps.a, "/v1/embeddings", { model: MODEL, input: "x" });
    expect(v1.status).toBe(501);
    expect(await v1.json()).toEqual({ error: { message: "this model does not support embeddings", type: "api_error", param: null, code: null } });
  });

  test("profile b: 400 in vLLM's error shape", async () => {
    const response = await post(apps.b, "/v1/embeddings", { model: MODEL, input: "x" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { message: "The model does not support Embeddings API", type: "BadRequestError", param: "model", code: 400 } });
  });

  test("profile c: LM Studio's refusal to load it as an embedding model", async () => {
    const response = await post(apps.c, "/v1/embeddings", { model: MODEL, input: "x" });
    expect(response.status).toBe(404);
    const body = await response.json() as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ message: `Failed to load model "${MODEL}". Error: Model is not embedding.`, param: "model", code: "model_not_found" });
  });

  test("nothing was loaded to say so", async () => {
    expect(manager.loadedEngines()).toEqual([]);
  });
});
