// Profile a's store routes end to end: a real `llamux serve` over a temporary store (OLLAMA_MODELS),
// the official `ollama` npm client, blobs uploaded over HTTP, pulls from the local hub and registry.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama } from "ollama";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startHubServer, type HubServer } from "../../fixtures/hub-server.ts";
import { type InternalService, startInternalService, startRegistryServer, type RegistryServer } from "../../fixtures/registry-server.ts";
import { tinyGguf } from "../../fixtures/tiny-gguf.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let server: RunningServer;
let hub: HubServer;
let registry: RegistryServer;
let internal: InternalService;
let ollama: Ollama;
let storeDir: string;
let modelBytes: Uint8Array;
let modelDigest: string;
const REGISTRY_TEMPLATE = "{{ .System }}<user>{{ .Prompt }}</user>";
const SECRET = "internal-secret-7f3a";

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const post = (path: string, body: unknown, method = "POST") =>
  fetch(`${server.baseUrl}${path}`, { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

beforeAll(async () => {
  storeDir = mkdtempSync(join(tmpdir(), "llamux-ollama-store-"));
  modelBytes = new Uint8Array(readFileSync(await ensureModel("tiny-llama")));
  modelDigest = sha256(modelBytes);
  const hubFile = await tinyGguf("hub model", { padBytes: 64 << 10 });
  hub = await startHubServer({ "llamux-test/Tiny-GGUF": { files: [{ path: "Tiny-Q4_K_M.gguf", content: hubFile }] } });
  registry = await startRegistryServer([{
    name: "library/tiny:latest",
    layers: [
      { mediaType: "application/vnd.ollama.image.model", content: await tinyGguf("registry model") },
      { mediaType: "application/vnd.ollama.image.template", content: new TextEncoder().encode(REGISTRY_TEMPLATE) },
      { mediaType: "application/vnd.ollama.image.params", content: new TextEncoder().encode(JSON.stringify({ temperature: 0.5, stop: ["</user>"] })) },
    ],
  }]);
  internal = await startInternalService(SECRET);
  registry.misbehave("library/redirected:latest", { manifest: "redirect", location: `${internal.url}/admin` });
  registry.misbehave("library/silent:latest", { manifest: "hang" });
  // a short pull time limit, so that a registry that never answers fails its pull within the test
  server = await startServer(["--profile", "a", "--ctx-size", "512", "--parallel", "2"], {
    OLLAMA_MODELS: storeDir, LLAMUX_MODELS: "", HF_ENDPOINT: hub.url, OLLAMA_REGISTRY: registry.url, LLAMUX_PULL_TIMEOUT: "2",
  });
  ollama = new Ollama({ host: server.baseUrl });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await hub?.stop();
  await registry?.stop();
  await internal?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

describe("blobs", () => {
  test("HEAD says whether a blob is there; a malformed digest is a 400", async () => {
    const missing = await fetch(`${server.baseUrl}/api/blobs/${sha256(new Uint8Array([1]))}`, { method: "HEAD" });
    expect(missing.status).toBe(404);
    const malformed = await fetch(`${server.baseUrl}/api/blobs/sha256:abc`, { method: "HEAD" });
    expect(malformed.status).toBe(400);
  });

  test("an upload whose bytes do not match the digest is refused and stores nothing", async () => {
    const wrong = sha256(new Uint8Array([9, 9, 9]));
    const response = await fetch(`${server.baseUrl}/api/blobs/${wrong}`, { method: "POST", body: new Uint8Array([1, 2, 3]) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe(`digest mismatch, expected "${wrong}", got "${sha256(new Uint8Array([1, 2, 3]))}"`);
    expect((await fetch(`${server.baseUrl}/api/blobs/${wrong}`, { method: "HEAD" })).status).toBe(404);
  });

  test("a GGUF upload is created (201), then already there (200)", async () => {
    const first = await fetch(`${server.baseUrl}/api/blobs/${modelDigest}`, { method: "POST", body: modelBytes });
    expect(first.status).toBe(201);
    const again = await fetch(`${server.baseUrl}/api/blobs/${modelDigest}`, { method: "POST", body: modelBytes });
    expect(again.status).toBe(200);
    expect((await fetch(`${server.baseUrl}/api/blobs/${modelDigest}`, { method: "HEAD" })).status).toBe(200);
  });
});

describe("create, list, show, generate", () => {
  test("create from the uploaded blob streams progress ending in success", async () => {
    const progress = await ollama.create({ model: "Tiny-Chat", files: { "model.gguf": modelDigest }, stream: true } as Parameters<Ollama["create"]>[0] & { stream: true });
    const statuses: string[] = [];
    for await (const line of progress) statuses.push(line.status);
    expect(statuses).toContain("writing manifest");
    expect(statuses.at(-1)).toBe("success");
  });

  test("create from an existing model with a template, system prompt and parameters (stream: false)", async () => {
    const done = await ollama.create({
      model: "tiny-chat:custom", from: "tiny-chat", template: "{{ .System }} {{ .Prompt }}", system: "You are a terse assistant who answers briefly.",
      parameters: { num_predict: 3, temperature: 0, stop: ["###"] },
    });
    expect(done.status).toBe("success");
  });

  test("/api/tags lists both, with the manifest digest, size and details", async () => {
    const { models } = await ollama.list();
    const names = models.map((m) => m.name);
    expect(names).toContain("Tiny-Chat:latest");
    // stored under the case the model part was first stored with
    expect(names).toContain("Tiny-Chat:custom");
    const base = models.find((m) => m.name === "Tiny-Chat:latest")!;
    expect(base.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(base.size).toBeGreaterThanOrEqual(modelBytes.byteLength);
    expect(base.details.family).toBe("llama");
    expect(base.details.format).toBe("gguf");
  });

  test("/api/show gives the Modelfile, parameters, template, system, model_info and capabilities", async () => {
    const shown = await ollama.show({ model: "TINY-CHAT:CUSTOM" });
    expect(shown.system).toBe("You are a terse assistant who answers briefly.");
    expect(shown.template).toBe("{{ .System }} {{ .Prompt }}");
    expect(shown.parameters).toMatch(/^num_predict\s+3$/m);
    expect(shown.parameters).toMatch(/^stop\s+"###"$/m);
    expect(shown.modelfile).toContain("SYSTEM You are a terse assistant who answers briefly.");
    expect(shown.modelfile).toContain("# FROM Tiny-Chat:custom");
    const info = shown.model_info as unknown as Record<string, unknown>;
    expect(info["general.architecture"]).toBe("llama");
    expect(info["tokenizer.ggml.tokens"]).toEqual([]);
    expect(info["general.name"]).toBeUndefined();
    expect(shown.capabilities).toContain("completion");
    expect(shown.details.family).toBe("llama");
    const verbose = (await post("/api/show", { model: "tiny-chat:custom", verbose: true }).then((r) => r.json())) as { model_info: Record<string, unknown> };
    expect((verbose.model_info["tokenizer.ggml.tokens"] as string[]).length).toBeGreaterThan(5);
  });

  test("the Modelfile's parameters are defaults under the request's options", async () => {
    const byDefault = await ollama.generate({ model: "tiny-chat:custom", prompt: "Count with me", options: { temperature: 0 } });
    expect(byDefault.eval_count).toBeLessThanOrEqual(3);
    const overridden = await ollama.generate({ model: "tiny-chat:custom", prompt: "Count with me", options: { num_predict: 1 } });
    expect(overridden.eval_count).toBe(1);
  });

  test("the model's TEMPLATE and SYSTEM shape the prompt; a request's system replaces it", async () => {
    const prompt = "Hello there";
    const run = (model: string, extra: Record<string, unknown> = {}) =>
      ollama.generate({ model, prompt, options: { num_predict: 1 }, ...extra }).then((r) => r.prompt_eval_count ?? 0);
    const withSystem = await run("tiny-chat:custom");
    const shortSystem = await run("tiny-chat:custom", { system: "Hi" });
    const noTemplate = await run("tiny-chat:custom", { template: "{{ .Prompt }}" });
    expect(withSystem).toBeGreaterThan(shortSystem);
    expect(shortSystem).toBeGreaterThan(noTemplate);
    const raw = await post("/api/generate", { model: "tiny-chat:custom", prompt, raw: true, stream: false, options: { num_predict: 1 } }).then((r) => r.json() as Promise<{ prompt_eval_count: number }>);
    expect(raw.prompt_eval_count).toBe(noTemplate);
  });

  test("/v1 requests get the Modelfile's parameters as defaults too", async () => {
    const body = { model: "tiny-chat:custom", messages: [{ role: "user", content: "Hi" }] };
    const completion = await post("/v1/chat/completions", body).then((r) => r.json() as Promise<{ usage: { completion_tokens: number } }>);
    expect(completion.usage.completion_tokens).toBeLessThanOrEqual(3);
    const longer = await post("/v1/chat/completions", { ...body, max_tokens: 1 }).then((r) => r.json() as Promise<{ usage: { completion_tokens: number } }>);
    expect(longer.usage.completion_tokens).toBe(1);
  });

  test("the Modelfile's MESSAGE lines come before the conversation", async () => {
    await ollama.create({ model: "tiny-seeded", from: "Tiny-Chat", messages: [{ role: "user", content: "My name is Ada." }, { role: "assistant", content: "Hello Ada." }] });
    const chat = (model: string) => ollama.chat({ model, messages: [{ role: "user", content: "Hi" }], options: { num_predict: 1 } }).then((r) => r.prompt_eval_count);
    expect(await chat("tiny-seeded")).toBeGreaterThan(await chat("Tiny-Chat"));
    expect((await ollama.show({ model: "tiny-seeded" })).messages).toHaveLength(2);
  });

  test("chat uses the store model, streamed and not", async () => {
    const whole = await ollama.chat({ model: "tiny-chat:custom", messages: [{ role: "user", content: "Hi" }], options: { num_predict: 2 } });
    expect(whole.message.role).toBe("assistant");
    expect(whole.done).toBe(true);
    const chunks = [];
    for await (const chunk of await ollama.chat({ model: "tiny-chat:custom", messages: [{ role: "user", content: "Hi" }], stream: true, options: { num_predict: 2 } })) chunks.push(chunk);
    expect(chunks.at(-1)!.done).toBe(true);
    expect(chunks.at(-1)!.eval_count).toBeLessThanOrEqual(2);
  });

  test("/api/ps shows the loaded store model", async () => {
    const { models } = await ollama.ps();
    expect(models.map((m) => m.name)).toContain("Tiny-Chat:custom");
  });
});

describe("quantize", () => {
  test("create with quantize writes a quantized model that generates", async () => {
    const statuses: string[] = [];
    for await (const line of await ollama.create({ model: "tiny-q8", from: "Tiny-Chat", quantize: "q8_0", stream: true })) statuses.push(line.status);
    expect(statuses).toContain("quantizing F16 model to Q8_0");
    expect(statuses.at(-1)).toBe("success");
    const shown = await ollama.show({ model: "tiny-q8" });
    expect(shown.details.quantization_level).toBe("Q8_0");
    const { models } = await ollama.list();
    const quantized = models.find((m) => m.name === "tiny-q8:latest")!;
    expect(quantized.size).toBeLessThan(models.find((m) => m.name === "Tiny-Chat:latest")!.size);
    const result = await ollama.generate({ model: "tiny-q8", prompt: "Hi", options: { num_predict: 2 } });
    expect(result.done).toBe(true);
  });

  test("deleting a loaded model unloads it", async () => {
    expect((await ollama.ps()).models.map((m) => m.name)).toContain("tiny-q8:latest");
    await ollama.delete({ model: "tiny-q8" });
    expect((await ollama.ps()).models.map((m) => m.name)).not.toContain("tiny-q8:latest");
    expect((await ollama.list()).models.map((m) => m.name)).not.toContain("tiny-q8:latest");
  });

  test("an unknown type is a 400 before anything is written", async () => {
    const response = await post("/api/create", { model: "tiny-bad", from: "Tiny-Chat", quantize: "q3_weird" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain("unsupported quantization type q3_weird");
  });
});

describe("models sharing weights", () => {
  test("unloading one model leaves loaded another that shares its weights (with an ADAPTER)", async () => {
    const lora = new Uint8Array(readFileSync(await ensureModel("tiny-llama-lora")));
    expect((await fetch(`${server.baseUrl}/api/blobs/${sha256(lora)}`, { method: "POST", body: lora })).status).toBe(201);
    await ollama.create({ model: "tiny-adapted", from: "Tiny-Chat", adapters: { "lora.gguf": sha256(lora) } } as Parameters<Ollama["create"]>[0]);
    await ollama.generate({ model: "Tiny-Chat", prompt: "Hi", options: { num_predict: 1 } });
    await ollama.generate({ model: "tiny-adapted", prompt: "Hi", options: { num_predict: 1 } });
    const loaded = async () => (await ollama.ps()).models.map((m) => m.name);
    expect(await loaded()).toEqual(expect.arrayContaining(["Tiny-Chat:latest", "tiny-adapted:latest"]));
    await ollama.generate({ model: "tiny-adapted", prompt: "", keep_alive: 0 });
    expect(await loaded()).toContain("Tiny-Chat:latest");
    expect(await loaded()).not.toContain("tiny-adapted:latest");
  });
});

describe("copy and delete", () => {
  test("a copy has the same digest; deleting it leaves the original", async () => {
    await ollama.copy({ source: "tiny-chat:custom", destination: "team/copied:v1" });
    let { models } = await ollama.list();
    const original = models.find((m) => m.name === "Tiny-Chat:custom")!;
    const copy = models.find((m) => m.name === "team/copied:v1")!;
    expect(copy.digest).toBe(original.digest);
    await ollama.delete({ model: "team/copied:v1" });
    ({ models } = await ollama.list());
    expect(models.map((m) => m.name)).not.toContain("team/copied:v1");
    expect(models.map((m) => m.name)).toContain("Tiny-Chat:custom");
  });

  test("a model created from a GGUF of its own, never loaded, deletes with a 200", async () => {
    const own = await tinyGguf("deleted before it was ever loaded");
    expect((await fetch(`${server.baseUrl}/api/blobs/${sha256(own)}`, { method: "POST", body: own })).status).toBe(201);
    await ollama.create({ model: "tiny-own-blob", files: { "model.gguf": sha256(own) } } as Parameters<Ollama["create"]>[0] & { stream?: false });
    expect((await ollama.list()).models.map((m) => m.name)).toContain("tiny-own-blob:latest");
    // the client throws on any status but 200
    await ollama.delete({ model: "tiny-own-blob" });
    expect((await ollama.list()).models.map((m) => m.name)).not.toContain("tiny-own-blob:latest");
    expect((await fetch(`${server.baseUrl}/api/blobs/${sha256(own)}`, { method: "HEAD" })).status).toBe(404);
  });

  test("copying or deleting what is not there is a 404 in Ollama's words", async () => {
    const copy = await post("/api/copy", { source: "nothing-here", destination: "x" });
    expect(copy.status).toBe(404);
    expect(await copy.json()).toEqual({ error: 'model "nothing-here" not found' });
    const removed = await post("/api/delete", { model: "nothing-here" }, "DELETE");
    expect(removed.status).toBe(404);
    expect(await removed.json()).toEqual({ error: "model 'nothing-here' not found" });
    const invalid = await post("/api/copy", { source: "tiny-chat:custom", destination: "bad name!" });
    expect(invalid.status).toBe(400);
  });
});

describe("pull", () => {
  test("from the hub, with progress lines ending in success", async () => {
    const statuses: string[] = [];
    let sawBytes = false;
    for await (const line of await ollama.pull({ model: "hf.co/llamux-test/Tiny-GGUF:Q4_K_M", stream: true })) {
      statuses.push(line.status);
      if (line.total && line.completed) sawBytes = true;
    }
    expect(statuses.at(-1)).toBe("success");
    expect(sawBytes).toBe(true);
    const { models } = await ollama.list();
    expect(models.map((m) => m.name)).toContain("hf.co/llamux-test/Tiny-GGUF:Q4_K_M");
  });

  test("from the registry with stream: false; its template and parameters come along", async () => {
    const done = await ollama.pull({ model: "tiny" });
    expect(done.status).toBe("success");
    const shown = await ollama.show({ model: "tiny" });
    expect(shown.template).toBe(REGISTRY_TEMPLATE);
    expect(shown.parameters).toMatch(/^temperature\s+0\.5$/m);
  });

  test("a pull redirected to a private address fails without quoting what answered there", async () => {
    const error = await ollama.pull({ model: "redirected" }).then(() => undefined, (e: Error) => e);
    expect(error?.message).toContain(`Cannot follow a redirect to "${internal.url}"`);
    expect(error?.message).not.toContain(SECRET);
    expect(internal.requests).toEqual([]);
  });

  test("a registry that never answers ends the pull (stream: false) with an error", async () => {
    const response = await post("/api/pull", { model: "silent", stream: false });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: `Cannot pull "silent": pull model manifest: ${registry.url} did not answer within 2 s` });
  }, 30_000);

  test("a name the hub does not have is an error line, and nothing is stored", async () => {
    const response = await post("/api/pull", { model: "hf.co/llamux-test/Missing-GGUF" });
    expect(response.status).toBe(200);
    const lines = (await response.text()).trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.at(-1).error).toContain("Missing-GGUF");
    const { models } = await ollama.list();
    expect(models.map((m) => m.name).join()).not.toContain("Missing");
  });
});

describe("errors", () => {
  test("show: model required 400, unknown 404", async () => {
    const missing = await post("/api/show", {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: "model is required" });
    const unknown = await post("/api/show", { model: "nope" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "model 'nope' not found" });
  });

  test("generate and chat with an unknown model: 404 model 'x' not found", async () => {
    for (const path of ["/api/generate", "/api/chat"]) {
      const response = await post(path, { model: "nope:7b", prompt: "hi", messages: [{ role: "user", content: "hi" }] });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: "model 'nope:7b' not found" });
    }
  });

  test("create: no source is a 400, a missing base a 404, a blob not uploaded a 400", async () => {
    expect((await post("/api/create", { model: "x" })).status).toBe(400);
    const missingBase = await post("/api/create", { model: "x", from: "not-there" });
    expect(missingBase.status).toBe(404);
    const missingBlob = await post("/api/create", { model: "x", files: { "a.gguf": sha256(new Uint8Array([7])) } });
    expect(missingBlob.status).toBe(400);
    expect(((await missingBlob.json()) as { error: string }).error).toContain("upload it first");
  });

  test("create from the older Modelfile text form", async () => {
    const response = await post("/api/create", { model: "from-text", modelfile: `FROM @${modelDigest}\nSYSTEM Be brief.\nPARAMETER num_predict 2\n`, stream: false });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "success" });
    const shown = await ollama.show({ model: "from-text" });
    expect(shown.system).toBe("Be brief.");
  });
});
