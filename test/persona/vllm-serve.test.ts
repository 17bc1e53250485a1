// `vllm serve org/model` as vLLM users type it: the model comes from llamux's store (pulled from the
// local hub fixture, by serve itself when missing) and is served under the name as given, answering the
// openai client on profile b.
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { pullModel } from "../../src/store/pull.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { freePort, startServer, waitUntilReady } from "../server/serve-fixture.ts";

const REPO = "llamux-test/Tiny-Chat-GGUF";
// A vLLM id names the original weights; the GGUF conversion sits beside it as <model>-GGUF.
const BASE_REPO = "llamux-test/Tiny-Base";
const main = join(import.meta.dir, "..", "..", "src", "main.ts");
let dir: string;
let hub: HubServer;


const vllm = (args: string[]) =>
  Bun.spawn([process.execPath, main, ...args], {
    env: { ...process.env, LLAMUX_PERSONA: "vllm", LLAMUX_MODELS: join(dir, "store"), HF_ENDPOINT: hub.url, HF_TOKEN: "" },
    stdout: "pipe", stderr: "pipe",
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-vllm-"));
  const gguf = new Uint8Array(readFileSync(await ensureModel("tiny-llama")));
  hub = await startHubServer({
    [REPO]: { files: [{ path: "tiny-chat-Q4_K_M.gguf", content: gguf }] },
    [BASE_REPO]: { files: [{ path: "config.json", content: new TextEncoder().encode("{}") }, { path: "model.safetensors", content: new Uint8Array(16) }] },
    // Other bytes than REPO's, so that the pull must download them.
    [`${BASE_REPO}-GGUF`]: { files: [{ path: "Tiny-Base-Q8_0.gguf", content: new Uint8Array(readFileSync(await ensureModel("tiny-lfm2"))) }] },
  });
  // Pulled with its quantization as the tag, as `lms get org/model@Q4_K_M` stores it.
  await pullModel(new ModelStore(join(dir, "store")), `hf.co/${REPO}:Q4_K_M`, { hub: { endpoint: hub.url } });
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function expectServes(model: string): Promise<string> {
  const server = await startServer([model, "--max-model-len", "512"], {
    LLAMUX_PERSONA: "vllm", LLAMUX_MODELS: join(dir, "store"), HF_ENDPOINT: hub.url, HF_TOKEN: "", LLAMUX_LOG_LEVEL: "info",
  });
  try {
    await waitUntilReady(server); // vLLM is up once its model has loaded
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toContain(model);
    const completion = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], max_tokens: 3, temperature: 0 });
    expect(completion.model).toBe(model);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
  } finally {
    await server.stop();
  }
  return server.stderr();
}

test("vllm serve org/model serves the stored model under that name", async () => {
  await expectServes(REPO);
}, 120_000);

test("vllm serve org/model pulls a missing model, from the -GGUF repository when the id has no GGUF", async () => {
  hub.requests.length = 0;
  const stderr = await expectServes(BASE_REPO);
  expect(stderr).toContain(`"${BASE_REPO}" is not in the store`);
  const downloads = hub.requests.filter((r) => r.server === "hub" && r.path.includes("/resolve/main/")).map((r) => r.path);
  expect(downloads).toContain(`/${BASE_REPO}-GGUF/resolve/main/Tiny-Base-Q8_0.gguf`);
  // Stored under the repository it came from; the next start finds it without the hub.
  expect(new ModelStore(join(dir, "store")).list().map((m) => m.name)).toContain(`hf.co/${BASE_REPO}-GGUF:latest`);
  // The next start finds it in the store: nothing is asked of the hub.
  hub.requests.length = 0;
  await expectServes(BASE_REPO);
  expect(hub.requests).toEqual([]);
}, 180_000);

test("a model that is neither a file, stored, nor on the hub is refused before listening", async () => {
  const child = vllm(["serve", "nobody/nothing", "--port", String(await freePort())]);
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  expect(code).toBe(1);
  expect(stderr).toContain('Cannot pull "nobody/nothing": neither "nobody/nothing" nor "nobody/nothing-GGUF" on the Hugging Face hub has a GGUF file');
}, 60_000);
