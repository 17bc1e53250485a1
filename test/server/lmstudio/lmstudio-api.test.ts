// Profile c end to end: a real `llamux serve --profile c` over a fresh store (LLAMUX_MODELS) and the
// local hub fixture (HF_ENDPOINT). LM Studio's own routes (/lmstudio-greeting, /api/v0, /api/v1),
// just-in-time loading with a short ttl, model load/unload, a background download polled to its end,
// and the official `openai` client.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { ModelStore } from "../../../src/store/model-store.ts";
import { pullModel } from "../../../src/store/pull.ts";
import { type HubServer, startHubServer } from "../../fixtures/hub-server.ts";
import { type InternalService, startInternalService } from "../../fixtures/registry-server.ts";
import { tinyGguf } from "../../fixtures/tiny-gguf.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

const CHAT = "llamux-test/Tiny-Chat-GGUF";
const BERT = "llamux-test/Tiny-Bert-GGUF";
const LFM2 = "llamux-test/Tiny-Lfm2-GGUF";
const VISION = "llamux-test/Tiny-VL-GGUF";
const CHAT_ID = `hf.co/${CHAT}:latest`;
const VISION_ID = `hf.co/${VISION}:latest`;
const BERT_ID = `hf.co/${BERT}:latest`;

const REDIRECTED = "llamux-test/Redirected-GGUF";
const SILENT = "llamux-test/Silent-GGUF";
const SECRET = "internal-secret-7f3a";

const dir = mkdtempSync(join(tmpdir(), "llamux-lmstudio-test-"));
let hub: HubServer;
let internal: InternalService;
let server: RunningServer;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method, ...(body !== undefined ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Json };
}

/** Polls `read` until `done` holds or `seconds` pass; returns the last value read. */
async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, seconds: number): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await Bun.sleep(200);
  }
}

const v0Model = async (id: string) => (await call("GET", `/api/v0/models/${id}`)).json;
const chat = (model: string, extra: Json = {}) =>
  call("POST", "/api/v0/chat/completions", { model, messages: [{ role: "user", content: "Hi" }], max_tokens: 4, ignore_eos: true, temperature: 0, ...extra });

beforeAll(async () => {
  const gguf = async (name: Parameters<typeof ensureModel>[0]) => new Uint8Array(readFileSync(await ensureModel(name)));
  hub = await startHubServer({
    [CHAT]: { files: [{ path: "tiny-chat-Q4_K_M.gguf", content: await gguf("tiny-llama") }] },
    [BERT]: { files: [{ path: "tiny-bert-F16.gguf", content: await gguf("tiny-bert") }] },
    [LFM2]: { files: [{ path: "tiny-lfm2-Q8_0.gguf", content: await gguf("tiny-lfm2") }] },
    // The chat model's weights again, with a vision projector: one blob, two models.
    [VISION]: { files: [{ path: "tiny-vl-Q4_K_M.gguf", content: await gguf("tiny-llama") }, { path: "mmproj-tiny-vl-F16.gguf", content: await gguf("tiny-mmproj") }] },
  });
  const storeDir = join(dir, "store");
  const store = new ModelStore(storeDir);
  for (const repo of [CHAT, BERT, VISION]) await pullModel(store, `hf.co/${repo}`, { hub: { endpoint: hub.url } });
  internal = await startInternalService(SECRET);
  // a short pull time limit, so that a hub that never answers fails its download within the test
  server = await startServer(["--profile", "c", "--ctx-size", "512", "--parallel", "1"], { LLAMUX_MODELS: storeDir, HF_ENDPOINT: hub.url, LLAMUX_PULL_TIMEOUT: "2" });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await hub?.stop();
  await internal?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("model selection", () => {
  test("GET /lmstudio-greeting identifies the server as LM Studio", async () => {
    const { status, json } = await call("GET", "/lmstudio-greeting");
    expect(status).toBe(200);
    expect(json.lmstudio).toBe(true);
  });

  test("with nothing loaded, an unknown model is a 400 that lists the available models", async () => {
    const { status, json } = await chat("no-such-model");
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ type: "invalid_request_error", param: "model", code: "model_not_found" });
    expect(json.error.message).toContain('Invalid model identifier "no-such-model"');
    expect(json.error.message).toContain(CHAT_ID);
    expect(json.error.message).toContain(BERT_ID);
  });

  test("GET /api/v0/models lists stored models, not loaded, with LM Studio's fields", async () => {
    const { json } = await call("GET", "/api/v0/models");
    expect(json.object).toBe("list");
    const byId = new Map<string, Json>(json.data.map((m: Json) => [m.id, m]));
    expect(byId.get(CHAT_ID)).toMatchObject({
      object: "model", type: "llm", publisher: "llamux-test", arch: "llama", compatibility_type: "gguf", state: "not-loaded",
    });
    expect(byId.get(BERT_ID)).toMatchObject({ type: "embeddings", arch: "bert", state: "not-loaded" });
    expect(byId.get(VISION_ID)).toMatchObject({ type: "vlm", arch: "llama", state: "not-loaded" });
    expect(byId.get(CHAT_ID)!.max_context_length).toBeGreaterThan(0);
    expect(typeof byId.get(CHAT_ID)!.quantization).toBe("string");
    expect((await call("GET", "/api/v0/models/nothing/here")).status).toBe(404);
  });

  test("a stored model loads just in time, and its ttl unloads it when idle", async () => {
    const { status, json } = await chat(CHAT, { ttl: 1 }); // LM Studio's key form, no host or tag
    expect(status).toBe(200);
    expect(json.model).toBe(CHAT_ID);
    expect(json.choices[0].message.content).toBeString();
    expect(json.stats.stop_reason).toBe("maxPredictedTokensReached");
    for (const field of ["tokens_per_second", "time_to_first_token", "generation_time"]) expect(json.stats[field]).toBeNumber();
    expect(json.stats.time_to_first_token).toBeGreaterThan(0);
    expect(json.model_info).toMatchObject({ arch: "llama", format: "gguf", context_length: 512 });
    expect(json.runtime.supported_formats).toEqual(["gguf"]);
    expect((await v0Model(CHAT_ID)).state).toBe("loaded");
    const after = await pollUntil(() => v0Model(CHAT_ID), (m) => m.state === "not-loaded", 20);
    expect(after.state).toBe("not-loaded");
  }, 60_000);

  test("any other model string answers with the loaded model", async () => {
    expect((await chat(CHAT_ID)).status).toBe(200);
    const { status, json } = await chat("gpt-4o-mini");
    expect(status).toBe(200);
    expect(json.model).toBe(CHAT_ID);
  }, 60_000);

  test("/api/v0/embeddings loads an embedding model just in time; Auto-Evict unloads the chat model loaded just in time", async () => {
    const { status, json } = await call("POST", "/api/v0/embeddings", { model: BERT_ID, input: ["one", "two"] });
    expect(status).toBe(200);
    expect(json.data).toHaveLength(2);
    expect(json.data[0].embedding.length).toBeGreaterThan(0);
    expect((await v0Model(BERT_ID)).state).toBe("loaded");
    expect((await v0Model(CHAT_ID)).state).toBe("not-loaded");
  }, 60_000);

  test("max_tokens -1, as LM Studio's examples send it, means no limit", async () => {
    // Token 1000 is forced and ends generation, so "no limit" finishes at once.
    const forcedStop = { max_tokens: -1, ignore_eos: false, logit_bias: { "1000": 100 }, stop_token_ids: [1000] };
    const { status, json } = await chat(CHAT_ID, forcedStop);
    expect(status).toBe(200);
    expect(json.stats.stop_reason).toBe("eosFound");
    const text = await call("POST", "/api/v0/completions", { model: CHAT_ID, prompt: "Once", ...forcedStop });
    expect(text.status).toBe(200);
    expect(text.json.stats.stop_reason).toBe("eosFound");
    expect((await chat(CHAT_ID, { max_tokens: 0 })).status).toBe(400);
  }, 60_000);

  test("/api/v0/completions adds stats", async () => {
    const { status, json } = await call("POST", "/api/v0/completions", { model: CHAT_ID, prompt: "Once", max_tokens: 3, temperature: 0, ignore_eos: true });
    expect(status).toBe(200);
    expect(json.object).toBe("text_completion");
    expect(json.usage.completion_tokens).toBe(3);
    expect(json.stats.stop_reason).toBe("maxPredictedTokensReached");
    expect(json.model_info.arch).toBe("llama");
  }, 60_000);
});

describe("REST API v1", () => {
  test("GET /api/v1/models lists models with loaded instances", async () => {
    const { json } = await call("GET", "/api/v1/models");
    const chatModel = json.models.find((m: Json) => m.key === CHAT_ID);
    expect(chatModel).toMatchObject({ type: "llm", publisher: "llamux-test", architecture: "llama", format: "gguf" });
    expect(chatModel.size_bytes).toBeGreaterThan(0);
    expect(chatModel.quantization.name).toBeString();
    expect(chatModel.capabilities).toMatchObject({ vision: false });
    expect(chatModel.loaded_instances).toHaveLength(1);
    expect(chatModel.loaded_instances[0].id).toBe(CHAT_ID);
    const bert = json.models.find((m: Json) => m.key === BERT_ID);
    expect(bert.type).toBe("embedding");
    expect(bert.architecture).toBeUndefined();
    expect(bert.capabilities).toBeUndefined();
  });

  test("a second load with other options is a second instance, named key:2 (options nested in `config` as older docs show)", async () => {
    expect((await call("POST", "/api/v1/models/load", { model: BERT_ID })).json.instance_id).toBe(BERT_ID);
    const loaded = await call("POST", "/api/v1/models/load", { model: BERT_ID, config: { context_length: 256 }, echo_load_config: true });
    expect(loaded.status).toBe(200);
    expect(loaded.json).toMatchObject({ type: "embedding", instance_id: `${BERT_ID}:2`, status: "loaded", load_config: { context_length: 256 } });
    const instances = async () => (await call("GET", "/api/v1/models")).json.models.find((m: Json) => m.key === BERT_ID).loaded_instances.map((i: Json) => i.id);
    expect((await instances()).sort()).toEqual([BERT_ID, `${BERT_ID}:2`]);
    const listed = (await call("GET", "/api/v1/models")).json.models.find((m: Json) => m.key === BERT_ID);
    expect(Object.keys(listed.loaded_instances[0].config)).toEqual(["context_length"]);
    expect((await call("POST", "/api/v1/models/unload", { instance_id: `${BERT_ID}:2` })).status).toBe(200);
    expect(await instances()).toEqual([BERT_ID]);
    // A model's LM Studio key (as `lms unload <key>` sends it) unloads its instances.
    expect((await call("POST", "/api/v1/models/unload", { instance_id: BERT })).json).toEqual({ instance_id: BERT_ID });
    expect(await instances()).toEqual([]);
  }, 60_000);

  test("a background download is polled to completion, then loads, serves and unloads", async () => {
    const started = await call("POST", "/api/v1/models/download", { model: `https://huggingface.co/${LFM2}`, quantization: "Q8_0" });
    expect(started.status).toBe(200);
    expect(started.json.job_id).toMatch(/^job_[0-9a-f]+$/);
    expect(["downloading", "completed"]).toContain(started.json.status);
    expect(started.json.started_at).toBeString();
    const status = () => call("GET", `/api/v1/models/download/status/${started.json.job_id}`).then((r) => r.json);
    const done = await pollUntil(status, (s) => s.status !== "downloading", 60);
    expect(done).toMatchObject({ job_id: started.json.job_id, status: "completed", model: `hf.co/${LFM2}:Q8_0` });
    expect(done.total_size_bytes).toBeGreaterThan(1_000_000);
    expect(done.downloaded_bytes).toBe(done.total_size_bytes);
    expect(done.completed_at).toBeString();

    const again = await call("POST", "/api/v1/models/download", { model: LFM2, quantization: "Q8_0" });
    expect(again.json).toEqual({ status: "already_downloaded", model: `hf.co/${LFM2}:Q8_0` });
    expect((await call("GET", "/api/v1/models/download/status/job_0000000000")).status).toBe(404);

    const loaded = await call("POST", "/api/v1/models/load", { model: `${LFM2}@Q8_0`, context_length: 256, echo_load_config: true });
    expect(loaded.status).toBe(200);
    expect(loaded.json).toMatchObject({ type: "llm", instance_id: `hf.co/${LFM2}:Q8_0`, status: "loaded" });
    expect(loaded.json.load_time_seconds).toBeNumber();
    expect(loaded.json.load_config.context_length).toBe(256);

    // A request naming it uses the loaded instance (context 256), and it becomes the most recently used.
    const reply = await chat(`hf.co/${LFM2}:Q8_0`);
    expect(reply.json.model_info).toMatchObject({ arch: "lfm2", context_length: 256 });
    expect((await chat("some-other-name")).json.model).toBe(`hf.co/${LFM2}:Q8_0`);
    expect((await chat(CHAT_ID)).json.model).toBe(CHAT_ID);
    expect((await chat("some-other-name")).json.model).toBe(CHAT_ID);
    // Auto-Evict unloads the chat model loaded just in time, never the one loaded on purpose.
    expect((await call("POST", "/api/v0/embeddings", { model: BERT_ID, input: "one" })).status).toBe(200);
    expect((await v0Model(CHAT_ID)).state).toBe("not-loaded");
    expect((await v0Model(`hf.co/${LFM2}:Q8_0`)).state).toBe("loaded");
    // The embedding model was used last, but an unknown name gets a generative model.
    expect((await chat("some-other-name")).json.model).toBe(`hf.co/${LFM2}:Q8_0`);

    const instances = async () => (await call("GET", "/api/v1/models")).json.models.find((m: Json) => m.key === `hf.co/${LFM2}:Q8_0`).loaded_instances;
    expect(await instances()).toHaveLength(1);
    const unloaded = await call("POST", "/api/v1/models/unload", { instance_id: loaded.json.instance_id });
    expect(unloaded).toEqual({ status: 200, json: { instance_id: loaded.json.instance_id } });
    expect(await instances()).toEqual([]);
    expect((await call("POST", "/api/v1/models/unload", { instance_id: "nothing-loaded" })).status).toBe(404);
  }, 120_000);

  test("a download that cannot succeed ends as failed, with the reason", async () => {
    const started = await call("POST", "/api/v1/models/download", { model: "llamux-test/Missing-GGUF" });
    expect(started.status).toBe(200);
    const status = () => call("GET", `/api/v1/models/download/status/${started.json.job_id}`).then((r) => r.json);
    const done = await pollUntil(status, (s) => s.status !== "downloading", 30);
    expect(done.status).toBe("failed");
    expect(done.error).toContain("llamux-test/Missing-GGUF");
  });

  test("bad requests are 400s naming the field", async () => {
    const load = await call("POST", "/api/v1/models/load", { model: CHAT_ID, context_length: "big" });
    expect(load.status).toBe(400);
    expect(load.json.error).toMatchObject({ type: "invalid_request", param: "context_length" });
    expect(load.json.error.message).toContain("context_length");
    expect((await call("GET", "/api/v1/models/download/status/job_0123456789")).json.error.type).toBe("job_not_found");
    expect((await call("POST", "/api/v1/models/unload", { instance_id: "nothing" })).json.error.type).toBe("model_not_found");
    expect((await call("POST", "/api/v1/models/load", { model: "not/stored" })).status).toBe(404);
    expect((await call("POST", "/api/v1/models/download", { model: "http://huggingface.co/a/b" })).status).toBe(400);
    // a hub URL with "." or ".." parts is refused like any bad name, not started as a job that fails at once
    for (const model of ["https://huggingface.co/../../x", `https://huggingface.co/${CHAT}/resolve/main/../../x.gguf`, "https://huggingface.co/org/%2e%2E/x"]) {
      const refused = await call("POST", "/api/v1/models/download", { model });
      expect(refused.status).toBe(400);
      expect(refused.json.error).toMatchObject({ type: "invalid_request", param: "model" });
      expect(refused.json.error.message).toContain('"." or ".." parts');
    }
  });

  test("a download redirected to a private address fails without quoting what answered there", async () => {
    hub.setRepo(REDIRECTED, { files: [{ path: "redirected-Q4_K_M.gguf", content: await tinyGguf("redirected") }] });
    hub.redirect(REDIRECTED, "redirected-Q4_K_M.gguf", `${internal.url}/latest/meta-data`);
    const started = await call("POST", "/api/v1/models/download", { model: REDIRECTED });
    const status = () => call("GET", `/api/v1/models/download/status/${started.json.job_id}`).then((r) => r.json);
    const done = await pollUntil(status, (s) => s.status !== "downloading", 30);
    expect(done.status).toBe("failed");
    expect(done.error).toContain(`Cannot follow a redirect to "${internal.url}"`);
    expect(done.error).not.toContain(SECRET);
    expect(internal.requests).toEqual([]);
  });

  test("a download from a hub that never answers fails, and a new download of it starts afresh", async () => {
    hub.setRepo(SILENT, { files: [{ path: "silent-Q4_K_M.gguf", content: await tinyGguf("silent") }] });
    hub.hang(SILENT);
    const first = await call("POST", "/api/v1/models/download", { model: SILENT });
    const status = (id: string) => () => call("GET", `/api/v1/models/download/status/${id}`).then((r) => r.json);
    const failed = await pollUntil(status(first.json.job_id), (s) => s.status !== "downloading", 30);
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain(`${hub.url} did not answer within 2 s`);
    hub.hang(SILENT, false);
    const second = await call("POST", "/api/v1/models/download", { model: SILENT });
    expect(second.json.job_id).not.toBe(first.json.job_id);
    const done = await pollUntil(status(second.json.job_id), (s) => s.status !== "downloading", 30);
    expect(done).toMatchObject({ status: "completed", model: `hf.co/${SILENT}:latest` });
  }, 60_000);
});

describe("REST API v1 chat", () => {
  const v1Chat = (body: Json) => call("POST", "/api/v1/chat", { model: CHAT_ID, max_output_tokens: 3, temperature: 0, ...body });

  test("answers output items and stats, and continues a stored conversation", async () => {
    const first = await v1Chat({ input: "My favourite colour is blue.", system_prompt: "Be brief." });
    expect(first.status).toBe(200);
    expect(first.json.model_instance_id).toBe(CHAT_ID);
    expect(first.json.output.at(-1).type).toBe("message");
    expect(first.json.output.at(-1).content).toBeString();
    expect(first.json.stats.input_tokens).toBeGreaterThan(0);
    expect(first.json.stats.total_output_tokens).toBeLessThanOrEqual(3);
    for (const field of ["reasoning_output_tokens", "tokens_per_second", "time_to_first_token_seconds"]) expect(first.json.stats[field]).toBeNumber();
    expect(first.json.response_id).toMatch(/^resp_[0-9a-f]{48}$/);

    // The stored conversation (system prompt, question, reply) comes before the new input.
    const next = await v1Chat({ input: "Which colour?", previous_response_id: first.json.response_id });
    expect(next.status).toBe(200);
    expect(next.json.stats.input_tokens).toBeGreaterThan(first.json.stats.input_tokens);
    expect(next.json.response_id).not.toBe(first.json.response_id);

    const unstored = await v1Chat({ input: "Hello", store: false });
    expect(unstored.json.response_id).toBeUndefined();
    expect((await v1Chat({ input: "Hello", previous_response_id: "resp_unknown" })).status).toBe(404);
    // MCP is off unless the server runs with --mcp: a plugin is a 400 that says so.
    const mcp = await v1Chat({ input: "Hello", integrations: ["mcp/playwright"] });
    expect(mcp.status).toBe(400);
    expect(mcp.json.error.message).toContain("start it with --mcp");
    expect((await v1Chat({ input: [{ type: "image", data_url: "data:image/png;base64,AAAA" }] })).status).toBe(400);
  }, 60_000);

  test("takes an image for a vision model, whose instance is not the text model sharing its weights", async () => {
    expect((await call("POST", "/api/v1/models/load", { model: CHAT_ID })).status).toBe(200); // kept through Auto-Evict
    const jpeg = readFileSync(join(import.meta.dir, "..", "..", "fixtures", "images", "python-16.jpg")).toString("base64");
    const question = { type: "message", content: "What is in the picture?" };
    const withImage = await v1Chat({ model: VISION, input: [question, { type: "image", data_url: `data:image/jpeg;base64,${jpeg}` }], store: false });
    expect(withImage.status).toBe(200);
    expect(withImage.json.model_instance_id).toBe(VISION_ID);
    const textOnly = await v1Chat({ model: VISION, input: [question], store: false });
    // The tiny projector makes 16 tokens of a 56x56 image.
    expect(withImage.json.stats.input_tokens - textOnly.json.stats.input_tokens).toBeGreaterThanOrEqual(16);
    const listed = (await call("GET", "/api/v1/models")).json.models.find((m: Json) => m.key === VISION_ID);
    expect(listed.capabilities.vision).toBe(true);
    expect(listed.loaded_instances.map((i: Json) => i.id)).toEqual([VISION_ID]);
    expect((await v0Model(CHAT_ID)).state).toBe("loaded");
  }, 60_000);

  test("streams named events from chat.start to chat.end", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/chat`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: CHAT_ID, input: "Tell me a story", max_output_tokens: 4, stream: true }),
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = (await response.text()).trim().split("\n\n").map((block) => {
      const event = /^event: (.+)$/m.exec(block)![1]!;
      const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as Json;
      expect(data.type).toBe(event);
      return data;
    });
    expect(events[0]).toEqual({ type: "chat.start", model_instance_id: CHAT_ID });
    const end = events.at(-1)!;
    expect(end.type).toBe("chat.end");
    const streamed = events.filter((e) => e.type === "message.delta").map((e) => e.content).join("");
    expect(streamed).toBe(end.result.output.at(-1).content);
    const types = events.map((e) => e.type);
    if (streamed) expect(types.indexOf("message.start")).toBeLessThan(types.indexOf("message.delta"));
    if (streamed) expect(types.indexOf("message.end")).toBeGreaterThan(types.lastIndexOf("message.delta"));
    expect(end.result.stats.total_output_tokens).toBeLessThanOrEqual(4);
  }, 60_000);
});

describe("the openai client against profile c", () => {
  test("lists stored models and chats with any model name, streamed or not", async () => {
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "lm-studio", maxRetries: 0 });
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining([CHAT_ID, BERT_ID]));
    const completion = await client.chat.completions.create({ model: "local-model", messages: [{ role: "user", content: "Hi" }], max_tokens: 3 });
    expect(completion.choices[0]!.message.content).toBeString();
    const stream = await client.chat.completions.create({ model: CHAT, messages: [{ role: "user", content: "Hi" }], max_tokens: 3, stream: true });
    let chunks = 0;
    for await (const _ of stream) chunks++;
    expect(chunks).toBeGreaterThan(1);
    const v0 = new OpenAI({ baseURL: `${server.baseUrl}/api/v0`, apiKey: "lm-studio", maxRetries: 0 });
    const withStats = (await v0.chat.completions.create({ model: CHAT_ID, messages: [{ role: "user", content: "Hi" }], max_tokens: 2 })) as unknown as Json;
    expect(withStats.stats.stop_reason).toBeString();
  }, 60_000);
});
