// Profile a's generation routes end to end: one real `llamux serve` on loopback, the official `ollama`
// npm client and raw HTTP (NDJSON framing, nanosecond durations, keep_alive load/unload, error bodies),
// chat truncation, and two requests to an lfm2 model running at the same time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama } from "ollama";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let server: RunningServer;
let ollama: Ollama;
let lfm2: string;
let bert: string;
let storeDir: string;
const MODEL = "tiny";

const post = (path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (response: Response) => response.json() as Promise<Record<string, any>>;
const errorOf = async (response: Response) => ((await response.json()) as { error: string }).error;

beforeAll(async () => {
  const llama = await ensureModel("tiny-llama");
  lfm2 = await ensureModel("tiny-lfm2");
  bert = await ensureModel("tiny-bert");
  storeDir = mkdtempSync(join(tmpdir(), "llamux-ollama-api-"));
  server = await startServer([llama, "--served-model-name", MODEL, "--profile", "a", "--ctx-size", "256", "--parallel", "2"], {
    OLLAMA_MODELS: storeDir, LLAMUX_MODELS: "", OLLAMA_MAX_QUEUE: "2",
  });
  ollama = new Ollama({ host: server.baseUrl });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

describe("probes", () => {
  test("GET / and /api/version answer as Ollama's", async () => {
    const root = await fetch(server.baseUrl);
    expect(await root.text()).toBe("Ollama is running");
    expect((await ollama.version()).version).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("/api/tags lists the model named on serve", async () => {
    const { models } = await ollama.list();
    expect(models.find((m) => m.name === MODEL)?.details.family).toBe("llama");
    expect((await fetch(`${server.baseUrl}/api/tags`, { method: "HEAD" })).status).toBe(200);
  });

  test("/api/show describes a served model from its GGUF: template, details, capabilities", async () => {
    const shown = await ollama.show({ model: MODEL });
    expect(shown.template).toContain("<|im_start|>");
    expect(shown.capabilities).toEqual(["completion", "tools"]);
    expect(shown.details.family).toBe("llama");
    const lfm = await ollama.show({ model: lfm2 });
    expect(lfm.capabilities).toContain("thinking");
    const embedding = await ollama.show({ model: bert });
    expect(embedding.capabilities).toEqual(["embedding"]);
  });
});

describe("generate", () => {
  test("non-streamed: the whole response, context and metrics", async () => {
    const result = await ollama.generate({ model: MODEL, prompt: "Once upon a time", options: { num_predict: 4, temperature: 0 } });
    expect(result.done).toBe(true);
    expect(["stop", "length"]).toContain(result.done_reason);
    expect(result.eval_count).toBeLessThanOrEqual(4);
    expect(result.context.length).toBeGreaterThan(result.prompt_eval_count);
    expect(typeof result.response).toBe("string");
  });

  test("streamed: NDJSON lines, done only on the last, durations in integer nanoseconds", async () => {
    const started = performance.now();
    const response = await post("/api/generate", { model: MODEL, prompt: "Tell me about the sea", options: { num_predict: 5, temperature: 0 } });
    const text = await response.text();
    const elapsedNs = (performance.now() - started) * 1e6;
    expect(response.headers.get("content-type")).toContain("application/x-ndjson");
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines.slice(0, -1).every((line) => line.done === false && typeof line.response === "string")).toBe(true);
    const last = lines.at(-1);
    expect(last.done).toBe(true);
    for (const field of ["total_duration", "load_duration", "prompt_eval_duration", "eval_duration"]) {
      expect(Number.isInteger(last[field])).toBe(true);
    }
    // nanoseconds: at least a millisecond of work, and no more than the client waited
    expect(last.total_duration).toBeGreaterThan(1e6);
    expect(last.total_duration).toBeLessThanOrEqual(elapsedNs);
    expect(last.total_duration).toBeGreaterThanOrEqual(last.eval_duration);
    expect(last.eval_count).toBe(lines.length - 1 >= 5 ? 5 : last.eval_count);
  });

  test("think on a model without the thinking capability, and suffix without insert, are refused", async () => {
    const think = await post("/api/generate", { model: MODEL, prompt: "hi", think: true });
    expect(think.status).toBe(400);
    expect(await errorOf(think)).toBe(`"${MODEL}" does not support thinking`);
    const suffix = await post("/api/generate", { model: MODEL, prompt: "def f(", suffix: "return x" });
    expect(suffix.status).toBe(400);
    expect(await errorOf(suffix)).toBe(`"${MODEL}" does not support insert`);
  });

  test("think on a thinking model is accepted", async () => {
    const result = await ollama.generate({ model: lfm2, prompt: "hi", think: true, options: { num_predict: 2 } });
    expect(result.done).toBe(true);
  });
});

describe("chat", () => {
  const messages = [{ role: "user", content: "Hello, how are you?" }];

  test("streamed chunks add up to the non-streamed answer", async () => {
    const options = { num_predict: 6, temperature: 0, seed: 7 };
    const whole = await ollama.chat({ model: MODEL, messages, options });
    let streamed = "";
    let last;
    for await (const chunk of await ollama.chat({ model: MODEL, messages, options, stream: true })) {
      streamed += chunk.message.content;
      last = chunk;
    }
    expect(streamed).toBe(whole.message.content);
    expect(last!.done).toBe(true);
    expect(last!.eval_count).toBe(whole.eval_count);
  });

  test("tool_choice is accepted, and none leaves the tools out of the prompt", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const withTools = await post("/api/chat", { model: MODEL, messages, tools, stream: false, options: { num_predict: 1 } }).then(json);
    const none = await post("/api/chat", { model: MODEL, messages, tools, tool_choice: "none", stream: false, options: { num_predict: 1 } }).then(json);
    expect(none.prompt_eval_count).toBeLessThan(withTools.prompt_eval_count);
  });

  test("a chat longer than the model's trained context loses its oldest messages (logged); truncate: false is a 400", async () => {
    // Over 4096 tokens, the tiny model's trained context: the context cannot grow for it, so it is fitted as Ollama fits it.
    const long = "The quick brown fox jumps over the lazy dog again and again. ";
    const history = Array.from({ length: 16 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${i}: ${long.repeat(30)}` }));
    const chat = [{ role: "system", content: "Be kind." }, ...history, { role: "user", content: "What was the first thing I said?" }];
    const fitted = await ollama.chat({ model: MODEL, messages: chat, options: { num_predict: 2 } });
    expect(fitted.done).toBe(true);
    expect(fitted.prompt_eval_count).toBeLessThan(256);
    expect(server.stderr()).toContain("oldest messages");
    const refused = await post("/api/chat", { model: MODEL, messages: chat, truncate: false, stream: false });
    expect(refused.status).toBe(400);
    expect(await errorOf(refused)).toStartWith("the prompt is longer than the context length");
  });
});

describe("load and unload with keep_alive", () => {
  test("an empty chat loads the model; keep_alive 0 unloads it; -1 keeps it forever", async () => {
    const loaded = await post("/api/chat", { model: lfm2, messages: [], keep_alive: "1m" }).then(json);
    expect(loaded).toMatchObject({ done: true, done_reason: "load", message: { role: "assistant", content: "" } });
    let running = await ollama.ps();
    const entry = running.models.find((m) => m.model === lfm2)!;
    const expiresIn = new Date(entry.expires_at).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(0);
    expect(expiresIn).toBeLessThanOrEqual(60_000);

    const forever = await post("/api/generate", { model: lfm2, prompt: "", keep_alive: -1 }).then(json);
    expect(forever.done_reason).toBe("load");
    running = await ollama.ps();
    expect(new Date(running.models.find((m) => m.model === lfm2)!.expires_at).getFullYear()).toBeGreaterThan(2300);

    const unloaded = await post("/api/generate", { model: lfm2, prompt: "", keep_alive: 0 }).then(json);
    expect(unloaded).toMatchObject({ done: true, done_reason: "unload", response: "" });
    running = await ollama.ps();
    expect(running.models.map((m) => m.model)).not.toContain(lfm2);
  });
});

describe("embed", () => {
  test("L2-normalised vectors, one per input", async () => {
    const { embeddings } = await ollama.embed({ model: bert, input: ["first text", "second text"] });
    expect(embeddings).toHaveLength(2);
    for (const vector of embeddings) expect(Math.hypot(...vector)).toBeCloseTo(1, 4);
  });
});

describe("errors", () => {
  test("chat without a model is a 400; generate with one not found a 404", async () => {
    const missing = await post("/api/chat", { messages: [{ role: "user", content: "hi" }] });
    expect(missing.status).toBe(400);
    expect(await errorOf(missing)).toBe("model is required");
    const unknown = await post("/api/generate", { model: "ghost", prompt: "hi" });
    expect(unknown.status).toBe(404);
    expect(await errorOf(unknown)).toBe("model 'ghost' not found");
  });

  test("an embedding model does not support chat or generate", async () => {
    const chat = await post("/api/chat", { model: bert, messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(400);
    expect(await errorOf(chat)).toBe(`"${bert}" does not support chat`);
    const generate = await post("/api/generate", { model: bert, prompt: "hi" });
    expect(generate.status).toBe(400);
    expect(await errorOf(generate)).toBe(`"${bert}" does not support generate`);
  });

  test("bad JSON and options of the wrong type are 400s; an unknown path is Ollama's plain 404", async () => {
    const bad = await fetch(`${server.baseUrl}/api/chat`, { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    const wrongType = await post("/api/generate", { model: MODEL, prompt: "hi", options: { stop: "x" } });
    expect(wrongType.status).toBe(400);
    expect(await errorOf(wrongType)).toContain('"stop"');
    const nowhere = await fetch(`${server.baseUrl}/api/nowhere`);
    expect(nowhere.status).toBe(404);
    expect(await nowhere.text()).toBe("404 page not found");
  });
});

describe("busy", () => {
  test("with both sequences busy and OLLAMA_MAX_QUEUE=2 waiting, one more request is a 503 in Ollama's words", async () => {
    const holders = [new AbortController(), new AbortController()];
    const readers = await Promise.all(holders.map(async (abort) => {
      const response = await fetch(`${server.baseUrl}/api/generate`, {
        method: "POST", signal: abort.signal,
        body: JSON.stringify({ model: MODEL, prompt: "Write a long story", options: { num_predict: 240, temperature: 1 } }),
      });
      const reader = response.body!.getReader();
      await reader.read(); // the first chunk: this request holds a sequence
      return reader;
    }));
    // two of these can wait in the queue; the third cannot
    const extra = await Promise.all([1, 2, 3].map(() => post("/api/generate", { model: MODEL, prompt: "hi", stream: false, options: { num_predict: 1 } })
      .then(async (response) => ({ status: response.status, body: await response.text() }))
      .finally(() => holders.forEach((abort) => abort.abort()))));
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    const refused = extra.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused[0]!.body)).toEqual({ error: "server busy, please try again.  maximum pending requests exceeded" });
  });
});

describe("parallel requests", () => {
  test("two streamed requests to an lfm2 model run at the same time", async () => {
    await post("/api/generate", { model: lfm2, prompt: "" }).then(json);
    const run = async (prompt: string) => {
      let first = 0;
      const stream = await ollama.generate({ model: lfm2, prompt, stream: true, options: { num_predict: 24, temperature: 0 } });
      for await (const chunk of stream) {
        if (!first) first = performance.now();
        if (chunk.done) return { first, done: performance.now(), tokens: chunk.eval_count };
      }
      throw new Error("stream ended without done");
    };
    const [a, b] = await Promise.all([run("The history of ships"), run("A recipe for bread")]);
    expect(a.tokens).toBeGreaterThan(8);
    expect(b.tokens).toBeGreaterThan(8);
    // each produced its first token before the other finished: they overlapped
    expect(a.first).toBeLessThan(b.done);
    expect(b.first).toBeLessThan(a.done);
  });
});
