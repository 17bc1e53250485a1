// `llamux serve` options end to end: API keys with the openai client, --chat-template,
// --gpu-memory-utilization on a machine without a GPU, profile a's liveness routes, usage errors.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

let model: string;
let keyed: RunningServer;
let templated: RunningServer;

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
  [keyed, templated] = await Promise.all([
    startServer([model, "--profile", "b", "--api-key", "sesame", "--gpu-memory-utilization", "0.5"], { LLAMUX_LOG_LEVEL: "info" }),
    startServer([model, "--profile", "a", "--chat-template", "{% for m in messages %}{{ m.content }}{% endfor %}"]),
  ]);
}, 120_000);
afterAll(() => Promise.all([keyed.stop(), templated.stop()]));

test("with --api-key, a wrong key is refused and the right one accepted", async () => {
  const wrong = new OpenAI({ baseURL: `${keyed.baseUrl}/v1`, apiKey: "guess", maxRetries: 0 });
  const error = await wrong.models.list().catch((e) => e);
  expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  const right = new OpenAI({ baseURL: `${keyed.baseUrl}/v1`, apiKey: "sesame", maxRetries: 0 });
  const completion = await right.chat.completions.create({ model: "", messages: [{ role: "user", content: "Hi" }], max_tokens: 2 });
  expect(completion.choices).toHaveLength(1);
  expect((await fetch(`${keyed.baseUrl}/health`)).status).toBe(200);
});

test("profile b loads its model at start and says it runs on the CPU", async () => {
  const deadline = Date.now() + 20_000;
  while (!keyed.stderr().includes("on the CPU") && Date.now() < deadline) await Bun.sleep(100);
  expect(keyed.stderr()).toContain("no GPU found: the model runs on the CPU");
  expect(keyed.stderr()).toContain("profile b runs the model on the CPU");
});

test("--chat-template replaces the model's template", async () => {
  const client = new OpenAI({ baseURL: `${templated.baseUrl}/v1`, apiKey: "x", maxRetries: 0 });
  const chat = await client.chat.completions.create({ model: "", messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 6, temperature: 0 });
  const text = await client.completions.create({ model: "", prompt: "Once upon a time", max_tokens: 6, temperature: 0 });
  expect(chat.usage!.prompt_tokens).toBe(text.usage!.prompt_tokens);
  expect(chat.choices[0]!.message.content).toBe(text.choices[0]!.text);
});

test("profile a answers / and /api/version like Ollama", async () => {
  const root = await fetch(templated.baseUrl);
  expect(await root.text()).toBe("Ollama is running");
  const version = (await (await fetch(`${templated.baseUrl}/api/version`)).json()) as { version: string; llamux_version: string };
  const [major, minor, patch] = version.version.split(".").map(Number);
  expect(major! * 10000 + minor! * 100 + patch!).toBeGreaterThanOrEqual(1701);
  expect(version.llamux_version).toMatch(/^\d+\.\d+\.\d+/);
});

test("usage errors: --port with --profile all, an unknown profile, a bad GPU fraction", async () => {
  const main = join(import.meta.dir, "..", "..", "src", "main.ts");
  const run = (args: string[]) => Bun.spawnSync([process.execPath, main, "serve", ...args], { stderr: "pipe" });
  const all = run(["--profile", "all", "--port", "9"]);
  expect(all.exitCode).toBe(2);
  expect(all.stderr.toString()).toContain("--port cannot be used with --profile all");
  expect(run(["--profile", "z"]).exitCode).toBe(2);
  expect(run([model, "--gpu-memory-utilization", "1.5"]).stderr.toString()).toContain("--gpu-memory-utilization must be in (0, 1]");
  expect(run(["/nonexistent.gguf"]).stderr.toString()).toContain('Cannot serve model "/nonexistent.gguf": no such file');
});
