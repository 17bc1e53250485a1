// `vllm serve org/model` as vLLM users type it: the model comes from llamux's store (pulled from the
// local hub fixture) and is served under the name as given, answering the openai client on profile b.
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { pullModel } from "../../src/store/pull.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";

const REPO = "llamux-test/Tiny-Chat-GGUF";
const main = join(import.meta.dir, "..", "..", "src", "main.ts");
let dir: string;
let hub: HubServer;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const vllm = (args: string[]) =>
  Bun.spawn([process.execPath, main, ...args], { env: { ...process.env, LLAMUX_PERSONA: "vllm", LLAMUX_MODELS: join(dir, "store") }, stdout: "pipe", stderr: "pipe" });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-vllm-"));
  hub = await startHubServer({ [REPO]: { files: [{ path: "tiny-chat-Q4_K_M.gguf", content: new Uint8Array(readFileSync(await ensureModel("tiny-llama"))) }] } });
  // Pulled with its quantization as the tag, as `lms get org/model@Q4_K_M` stores it.
  await pullModel(new ModelStore(join(dir, "store")), `hf.co/${REPO}:Q4_K_M`, { hub: { endpoint: hub.url } });
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("vllm serve org/model serves the stored model under that name", async () => {
  const port = await freePort();
  const child = vllm(["serve", REPO, "--port", String(port), "--max-model-len", "512"]);
  try {
    let ready = false;
    for (let i = 0; i < 300 && !ready && child.exitCode === null; i++) {
      ready = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (!ready) await Bun.sleep(100);
    }
    expect(ready).toBe(true);
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused", maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toContain(REPO);
    const completion = await client.chat.completions.create({ model: REPO, messages: [{ role: "user", content: "Hi" }], max_tokens: 3, temperature: 0 });
    expect(completion.model).toBe(REPO);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}, 120_000);

test("a model that is neither a file nor stored is refused before listening", async () => {
  const child = vllm(["serve", "nobody/nothing", "--port", String(await freePort())]);
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  expect(code).toBe(1);
  expect(stderr).toContain('Cannot serve model "nobody/nothing": no such file, and no model of that name in the store');
}, 60_000);
