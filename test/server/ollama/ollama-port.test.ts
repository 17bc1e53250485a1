// What Ollama's own clients and OpenAI-mode model pickers see on profile a, end to end with one real
// `llamux serve` over a temporary store: /v1/models lists the whole store, a missing model on /v1 is
// named in Ollama's words, a chat-only model asked for embeddings answers Ollama's 501, a model has one
// loaded instance whatever num_ctx requests ask for, and num_ctx is clamped to the trained context.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { Ollama, type ModelResponse } from "ollama";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { createModel } from "../../../src/store/create-model.ts";
import { ModelStore } from "../../../src/store/model-store.ts";
import { engineProcesses } from "../../fixtures/child-processes.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let server: RunningServer;
let ollama: Ollama;
let openai: OpenAI;
let storeDir: string;
let chatPath: string;
let bertPath: string;
const SERVED = "served-chat";
const STORED = ["tiny-chat:latest", "tiny-lfm:latest", "someone/tiny-chat:q4", "tiny-embed:latest"];
const TRAINED_CONTEXT = 4096; // the tiny test models' context_length

/** /api/ps entries carry context_length (Ollama 0.6.4's client types leave it out). */
type Loaded = ModelResponse & { context_length: number };
const running = async () => (await ollama.ps()).models as Loaded[];

const post = (path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

beforeAll(async () => {
  chatPath = await ensureModel("tiny-llama");
  bertPath = await ensureModel("tiny-bert");
  storeDir = mkdtempSync(join(tmpdir(), "llamux-ollama-port-"));
  const store = new ModelStore(storeDir);
  await createModel(store, "tiny-chat", { from: chatPath });
  await createModel(store, "tiny-lfm", { from: await ensureModel("tiny-lfm2") });
  await createModel(store, "someone/tiny-chat:q4", { from: chatPath });
  await createModel(store, "tiny-embed", { from: bertPath });
  server = await startServer([chatPath, "--served-model-name", SERVED, "--profile", "a", "--ctx-size", "512", "--parallel", "2", "--threads", "1"], {
    OLLAMA_MODELS: storeDir, LLAMUX_MODELS: "", LLAMUX_LOG_LEVEL: "info",
  });
  ollama = new Ollama({ host: server.baseUrl });
  openai = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "ollama", maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

describe("GET /v1/models lists what Ollama lists", () => {
  test("every stored model, as name:tag owned by its namespace, and the model named on serve", async () => {
    const page = await openai.models.list();
    const ids = page.data.map((m) => m.id);
    for (const name of STORED) expect(ids).toContain(name);
    expect(ids).toContain(SERVED);
    const tags = (await ollama.list()).models.map((m) => m.name);
    expect(ids.sort()).toEqual(tags.sort());
    const byId = new Map(page.data.map((m) => [m.id, m]));
    expect(byId.get("tiny-chat:latest")).toMatchObject({ object: "model", owned_by: "library" });
    expect(byId.get("someone/tiny-chat:q4")!.owned_by).toBe("someone");
    expect(byId.get("tiny-chat:latest")!.created).toBeGreaterThan(1_600_000_000);
  });

  test("GET /v1/models/{id} finds a stored model; a missing one is a 404 in Ollama's words", async () => {
    const card = await openai.models.retrieve("tiny-lfm:latest");
    expect(card).toMatchObject({ id: "tiny-lfm:latest", object: "model", owned_by: "library" });
    const missing = await openai.models.retrieve("ghost:latest").catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.message).toContain("model 'ghost:latest' not found");
  });

  test("a model listed there can be used by the name it is listed under", async () => {
    const completion = await openai.chat.completions.create({ model: "tiny-chat:latest", messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
    expect(completion.model).toBe("tiny-chat:latest");
  });
});

describe("an unknown model on /v1", () => {
  test("chat, completions and embeddings answer 404 `model \"x\" not found, try pulling it first`", async () => {
    const calls = [
      () => openai.chat.completions.create({ model: "ghost", messages: [{ role: "user", content: "hi" }] }),
      () => openai.completions.create({ model: "ghost", prompt: "hi" }),
      () => openai.embeddings.create({ model: "ghost", input: "hi" }),
    ];
    for (const call of calls) {
      const error = await call().catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.error).toEqual({ message: 'model "ghost" not found, try pulling it first', type: "not_found_error", param: null, code: null });
    }
  });
});

describe("a chat-only model asked for embeddings", () => {
  test("/api/embed and /api/embeddings answer 501 {\"error\":\"this model does not support embeddings\"}", async () => {
    for (const [path, body] of [["/api/embed", { model: "tiny-chat", input: "hello" }], ["/api/embeddings", { model: "tiny-chat", prompt: "hello" }]] as const) {
      const response = await post(path, body);
      expect(response.status).toBe(501);
      expect(await response.json()).toEqual({ error: "this model does not support embeddings" });
    }
    const error = await ollama.embed({ model: "tiny-chat", input: ["a", "b"] }).catch((e) => e);
    expect(error.status_code).toBe(501);
    expect(error.error).toBe("this model does not support embeddings");
  });

  test("/v1/embeddings answers the same 501 in the OpenAI shape", async () => {
    const error = await openai.embeddings.create({ model: "tiny-chat", input: "hello" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(501);
    expect(error.error).toEqual({ message: "this model does not support embeddings", type: "api_error", param: null, code: null });
  });

  test("an empty input loads the model, as Ollama's does, and an embedding model still embeds", async () => {
    const empty = await post("/api/embed", { model: "tiny-lfm", input: [] });
    expect(empty.status).toBe(200);
    expect(await empty.json()).toMatchObject({ model: "tiny-lfm", embeddings: [] });
    expect((await ollama.ps()).models.map((m) => m.name)).toContain("tiny-lfm:latest");
    const { embeddings } = await ollama.embed({ model: "tiny-embed", input: "hello" });
    expect(embeddings).toHaveLength(1);
  });
});

describe("one instance of a model", () => {
  const psOf = async (name: string) => (await running()).filter((m) => m.name === name);
  const chat = (numCtx: number | undefined) => ollama.chat({
    model: "tiny-chat", messages: [{ role: "user", content: "hi" }], options: { num_predict: 2, ...(numCtx ? { num_ctx: numCtx } : {}) },
  });

  test("another num_ctx reloads it; a smaller one shares the loaded instance; /api/ps lists it once", async () => {
    await chat(1024);
    expect((await psOf("tiny-chat:latest")).map((m) => m.context_length)).toEqual([1024]);
    await chat(2048);
    expect((await psOf("tiny-chat:latest")).map((m) => m.context_length)).toEqual([2048]);
    await chat(768);
    expect((await psOf("tiny-chat:latest")).map((m) => m.context_length)).toEqual([2048]);
    await chat(undefined); // the server's default (512) fits too
    expect(await psOf("tiny-chat:latest")).toHaveLength(1);
  });

  test("6 simultaneous requests with different num_ctx: all answered, never two instances, never more engines than the cap", async () => {
    let mostEngines = 0;
    let mostListed = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        mostEngines = Math.max(mostEngines, engineProcesses(server.pid).length);
        mostListed = Math.max(mostListed, (await psOf("tiny-lfm:latest")).length);
        await Bun.sleep(20);
      }
    })();
    const contexts = [600, 700, 800, 900, 1000, 1100];
    const replies = await Promise.all(contexts.map((num_ctx) =>
      ollama.chat({ model: "tiny-lfm", messages: [{ role: "user", content: "hi" }], options: { num_ctx, num_predict: 2 } })));
    sampling = false;
    await sampler;
    expect(replies.every((r) => r.done)).toBe(true);
    expect(mostListed).toBe(1);
    expect(mostEngines).toBeGreaterThan(0);
    expect(mostEngines).toBeLessThanOrEqual(3); // OLLAMA_MAX_LOADED_MODELS's default
    const listed = await psOf("tiny-lfm:latest");
    expect(listed).toHaveLength(1);
    expect(listed[0]!.context_length).toBeGreaterThanOrEqual(600);
  });
});

describe("num_ctx beyond the model's trained context", () => {
  test("is clamped to it with a log line (1e9 and 2^30 alike), never grown or wrapped", async () => {
    for (const num_ctx of [1e9, 2 ** 30]) {
      const reply = await ollama.generate({ model: "tiny-chat", prompt: "hi", options: { num_ctx, num_predict: 2 } });
      expect(reply.done).toBe(true);
      const [loaded] = (await running()).filter((m) => m.name === "tiny-chat:latest");
      expect(loaded!.context_length).toBe(TRAINED_CONTEXT);
    }
    expect(server.stderr()).toContain(`context of ${1e9} tokens asked for "tiny-chat:latest" is more than it was trained for: using ${TRAINED_CONTEXT}`);
  });

  test("on /v1 too (num_ctx at the top level or in options)", async () => {
    const completion = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: "tiny-lfm", messages: [{ role: "user", content: "hi" }], max_tokens: 2, options: { num_ctx: 2 ** 31 } }),
    });
    expect(completion.status).toBe(200);
    const [loaded] = (await running()).filter((m) => m.name === "tiny-lfm:latest");
    expect(loaded!.context_length).toBe(TRAINED_CONTEXT);
  });
});
