// Hostile input that used to crash an engine or freeze the server, end to end on a real `llamux serve`:
// out-of-range token ids (SIGABRT), a request's or a stored Go template that loops for ever, a model's
// Jinja template that loops 3e7 times, grammars nested 20,000 deep (SIGSEGV), JSON schemas nested
// 10,000 deep (a 500), and alternations thousands wide. Each is a 400 that says what was refused, and
// the generation in flight on the same engine runs to its end.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, waitUntilReady, type RunningServer } from "./serve-fixture.ts";

let server: RunningServer;
let modelPath: string;
let storeDir: string;
const MODEL = "tiny";

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
const ollamaError = async (response: Response) => ((await response.json()) as { error: string }).error;
const openAiError = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message;

interface InFlight extends Promise<{ finish: string; completionTokens: number }> {
  /** Resolves once the engine has produced the completion's first token: it is decoding. */
  started: Promise<void>;
}

/**
 * A streamed completion that generates `tokens` tokens (EOS ignored) while the test sends hostile requests
 * to the same engine; resolves with the tokens it produced and how it finished.
 */
function inFlight(tokens = 48): InFlight {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = post(server.baseUrl, "/v1/completions", {
    model: MODEL, prompt: "Once upon a time", max_tokens: tokens, ignore_eos: true, temperature: 0, stream: true, stream_options: { include_usage: true },
  }).then(async (response) => {
    let finish = "";
    let completionTokens = 0;
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of response.body!) {
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith("data: {")) continue;
        const event = JSON.parse(line.slice(6)) as { choices: Array<{ finish_reason: string | null }>; usage?: { completion_tokens: number } };
        markStarted();
        finish = event.choices[0]?.finish_reason ?? finish;
        if (event.usage) completionTokens = event.usage.completion_tokens;
      }
    }
    markStarted();
    return { finish, completionTokens };
  });
  return Object.assign(done, { started });
}

beforeAll(async () => {
  modelPath = await ensureModel("tiny-llama");
  storeDir = mkdtempSync(join(tmpdir(), "llamux-hostile-"));
  server = await startServer([modelPath, "--served-model-name", MODEL, "--profile", "a", "--ctx-size", "512", "--parallel", "4"], {
    OLLAMA_MODELS: storeDir, LLAMUX_MODELS: "",
  });
  // Loaded before the tests start, so that timings do not include loading.
  await post(server.baseUrl, "/api/generate", { model: MODEL, prompt: "hi", options: { num_predict: 1 } });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

describe("token ids outside the vocabulary", () => {
  test("/api/generate context and /v1/completions prompt are 400s naming the id; the generation in flight finishes", async () => {
    const running = inFlight();
    await running.started;
    for (const context of [[999999999], [-5]]) {
      const response = await post(server.baseUrl, "/api/generate", { model: MODEL, prompt: "hi", context, options: { num_predict: 2 } });
      expect(response.status).toBe(400);
      expect(await ollamaError(response)).toContain(`Token id ${context[0]} in context is out of vocabulary`);
    }
    const completion = await post(server.baseUrl, "/v1/completions", { model: MODEL, prompt: [1, 999999999], max_tokens: 2 });
    expect(completion.status).toBe(400);
    expect(await openAiError(completion)).toContain("Token id 999999999 in prompt is out of vocabulary");
    const biased = await post(server.baseUrl, "/v1/chat/completions", {
      model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 2, logit_bias: { "999999999": 5 },
    });
    expect(biased.status).toBe(400);
    expect(await openAiError(biased)).toContain("Token id 999999999 in logit_bias is out of vocabulary");

    expect(await running).toEqual({ finish: "length", completionTokens: 48 });
    const after = await post(server.baseUrl, "/api/generate", { model: MODEL, prompt: "hi", stream: false, options: { num_predict: 2 } });
    expect(after.status).toBe(200);
  }, 120_000);
});

describe("Go templates", () => {
  test("a request's template that loops 9e8 times is a 400 within its time bound, and the server answers meanwhile", async () => {
    const started = performance.now();
    const hostile = post(server.baseUrl, "/api/generate", {
      model: MODEL, prompt: "hi", template: "{{range 30000}}{{range 30000}}{{end}}{{end}}", stream: false,
    });
    const version = await fetch(`${server.baseUrl}/api/version`);
    expect(version.status).toBe(200);
    const response = await hostile;
    expect(response.status).toBe(400);
    const message = await ollamaError(response);
    expect(message).toMatch(/more than 1000000 steps|longer than 1000 ms/);
    expect(message).toContain("the request's template");
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 60_000);

  test("a stored TEMPLATE that never ends fails every request to its model with a 400 naming it; other models are unaffected", async () => {
    const bytes = new Uint8Array(readFileSync(modelPath));
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    expect((await fetch(`${server.baseUrl}/api/blobs/${digest}`, { method: "POST", body: bytes })).status).toBe(201);
    const created = await post(server.baseUrl, "/api/create", {
      model: "looping", files: { "model.gguf": digest }, template: "{{range 1000000000000}}x{{end}}{{ .Prompt }}", stream: false,
    });
    expect(created.status).toBe(200);
    const response = await post(server.baseUrl, "/api/chat", { model: "looping", messages: [{ role: "user", content: "hi" }], stream: false });
    expect(response.status).toBe(400);
    expect(await ollamaError(response)).toMatch(/Cannot execute template: .*\(the TEMPLATE of model/);
    const fine = await post(server.baseUrl, "/api/chat", { model: MODEL, messages: [{ role: "user", content: "hi" }], stream: false, options: { num_predict: 1 } });
    expect(fine.status).toBe(200);
  }, 120_000);
});

describe("grammars", () => {
  test("a raw grammar nested 20,000 deep is a 400 before llama.cpp parses it; the generation in flight finishes", async () => {
    const running = inFlight();
    await running.started;
    const grammar = `root ::= ${"(".repeat(20000)}"a"${")".repeat(20000)}`;
    const response = await post(server.baseUrl, "/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }], grammar, max_tokens: 2 });
    expect(response.status).toBe(400);
    expect(await openAiError(response)).toContain("its groups nest more than 100 deep");
    expect(await running).toEqual({ finish: "length", completionTokens: 48 });
  }, 120_000);

  test("a JSON schema nested 10,000 deep is a 400, not a stack overflow", async () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10_000; i++) schema = { type: "object", properties: { a: schema } };
    const response = await post(server.baseUrl, "/api/chat", { model: MODEL, messages: [{ role: "user", content: "hi" }], format: schema, stream: false });
    expect(response.status).toBe(400);
    expect(await ollamaError(response)).toContain("nests more than 128 levels deep");
  }, 60_000);

  test("an alternation 2,000 wide is refused; 8,000 choices with shared prefixes run, written as a prefix tree", async () => {
    const flat = `root ::= (${Array.from({ length: 2000 }, (_, i) => `"w${i}"`).join(" | ")})`;
    const refused = await post(server.baseUrl, "/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "hi" }], grammar: flat, max_tokens: 2 });
    expect(refused.status).toBe(400);
    expect(await openAiError(refused)).toContain("more than 128 alternatives");

    const choices = Array.from({ length: 8000 }, (_, i) => `option ${i}`);
    const response = await post(server.baseUrl, "/v1/chat/completions", {
      model: MODEL, messages: [{ role: "user", content: "Pick one" }], guided_choice: choices, max_tokens: 16, temperature: 1, seed: 3,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(choices).toContain(body.choices[0]!.message.content);
  }, 120_000);
});

describe("a model's own Jinja chat template", () => {
  let jinjaServer: RunningServer;
  let templateDir: string;
  beforeAll(async () => {
    templateDir = mkdtempSync(join(tmpdir(), "llamux-hostile-jinja-"));
    const templateFile = join(templateDir, "template.jinja");
    writeFileSync(templateFile, "{% for i in range(30000000) %}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}");
    jinjaServer = await startServer([modelPath, "--served-model-name", "jinja", "--profile", "b", "--max-model-len", "256", "--chat-template", templateFile]);
  }, 180_000);
  afterAll(async () => {
    await jinjaServer?.stop();
    rmSync(templateDir, { recursive: true, force: true });
  });

  test("a template looping 3e7 times is a 400 naming the model, at once, and plain completions still run", async () => {
    const started = performance.now();
    const response = await post(jinjaServer.baseUrl, "/v1/chat/completions", { model: "jinja", messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
    expect(response.status).toBe(400);
    const message = await openAiError(response);
    expect(message).toContain("range() of 30000000 numbers is more than 1000000");
    expect(message).toContain("the chat template of model");
    expect(performance.now() - started).toBeLessThan(10_000);
    const completion = await post(jinjaServer.baseUrl, "/v1/completions", { model: "jinja", prompt: "hi", max_tokens: 2 });
    expect(completion.status).toBe(200);
  }, 120_000);
});

describe("a slow chat template does not hold the server", () => {
  let slowServer: RunningServer;
  let templateDir: string;
  beforeAll(async () => {
    templateDir = mkdtempSync(join(tmpdir(), "llamux-slow-jinja-"));
    const templateFile = join(templateDir, "template.jinja");
    // About a second of rendering (Jinja's own bound stops it at one), on a worker thread.
    writeFileSync(templateFile, "{% for i in range(999999) %}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}");
    slowServer = await startServer([modelPath, "--served-model-name", "slow", "--profile", "b", "--max-model-len", "256", "--chat-template", templateFile]);
    await waitUntilReady(slowServer);
  }, 180_000);
  afterAll(async () => {
    await slowServer?.stop();
    rmSync(templateDir, { recursive: true, force: true });
  });

  test("/health keeps answering while a request's template renders", async () => {
    let settled = false;
    const slow = post(slowServer.baseUrl, "/v1/chat/completions", { model: "slow", messages: [{ role: "user", content: "hi" }], max_tokens: 1 })
      .finally(() => (settled = true));
    const latencies: number[] = [];
    while (!settled) {
      const started = performance.now();
      const health = await fetch(`${slowServer.baseUrl}/health`);
      if (!settled) latencies.push(performance.now() - started);
      expect(health.status).toBe(200);
    }
    expect([200, 400]).toContain((await slow).status);
    // Rendered on the serving thread, the template held every /health until it ended: one or two answers.
    expect(latencies.length).toBeGreaterThan(20);
    latencies.sort((a, b) => a - b);
    console.log(`/health during a slow render: ${latencies.length} answers, p99 ${latencies[Math.floor(latencies.length * 0.99)]!.toFixed(1)} ms`);
  }, 120_000);
});
