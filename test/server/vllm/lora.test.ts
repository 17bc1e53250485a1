// vLLM's LoRA adapters on profile b, through the openai package: --enable-lora with --lora-modules in both
// forms, the adapters in /v1/models with their parent, requests naming an adapter as their model (chat and
// completions) getting what that adapter gives alone while the base model and another adapter run beside
// them, and /v1/load_lora_adapter and /v1/unload_lora_adapter with vLLM's answers and error shapes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { createApp } from "../../../src/server/app.ts";
import { ModelManager } from "../../../src/engine/model-manager.ts";
import { ModelService } from "../../../src/server/model-service.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { expandLoraModules, loraFromFlags } from "../../../src/cli/lora-flags.ts";
import { type RunningServer, startServer, waitUntilReady } from "../serve-fixture.ts";
import { samples } from "../../fixtures/prometheus-text.ts";

const BASE = "tiny";
let server: RunningServer;
let client: OpenAI;
let paths: { model: string; a: string; b: string; lfm2: string };

beforeAll(async () => {
  paths = {
    model: await ensureModel("tiny-llama"), a: await ensureModel("tiny-llama-lora"), b: await ensureModel("tiny-llama-lora-b"),
    lfm2: await ensureModel("tiny-lfm2-lora"),
  };
  server = await startServer([
    paths.model, "--profile", "b", "--served-model-name", BASE, "--max-num-seqs", "4", "--max-model-len", "1024",
    "--enable-lora", "--lora-modules", `a=${paths.a}`, JSON.stringify({ name: "b", path: paths.b, base_model_name: BASE }), "--max-loras", "2",
  ], { VLLM_ALLOW_RUNTIME_LORA_UPDATING: "true" });
  await waitUntilReady(server);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

const question = (model: string) => ({
  model, messages: [{ role: "user" as const, content: "Name three rivers and say which is the longest." }], max_tokens: 12, temperature: 0, ...{ ignore_eos: true },
});
const chat = async (model: string) => (await client.chat.completions.create(question(model))).choices[0]!.message.content;

/** An error the openai client throws, as vLLM's body gave it. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; error: unknown }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status!, error: error.error };
    throw error;
  }
  throw new Error("the call succeeded");
}

// vLLM answers these with a plain sentence, which the client hands back as text
const load = (body: Record<string, unknown>) => client.post("/load_lora_adapter", { body }) as unknown as Promise<string>;
const unload = (body: Record<string, unknown>) => client.post("/unload_lora_adapter", { body }) as unknown as Promise<string>;

describe("adapters as models", () => {
  test("/v1/models lists each adapter with its file as root and the served model as parent", async () => {
    const models = (await client.models.list()).data as Array<OpenAI.Model & { root: string; parent: string | null }>;
    expect(models.map((m) => m.id)).toEqual([BASE, "a", "b"]);
    expect(models[0]).toMatchObject({ parent: null, root: paths.model, owned_by: "vllm" });
    expect(models[1]).toMatchObject({ parent: BASE, root: paths.a });
    expect(models[2]).toMatchObject({ parent: BASE, root: paths.b });
    expect(await client.models.retrieve("b")).toMatchObject({ id: "b", parent: BASE });
  });

  test("requests on two adapters and the base at once each get what they get alone, named by their model", async () => {
    const alone: Record<string, string | null> = { [BASE]: await chat(BASE), a: await chat("a"), b: await chat("b") };
    expect(new Set(Object.values(alone)).size).toBe(3);
    const order = [BASE, "a", "b", "b", "a", BASE];
    const replies = await Promise.all(order.map((model) => client.chat.completions.create(question(model))));
    replies.forEach((reply, i) => {
      expect(reply.model).toBe(order[i]!);
      expect(reply.choices[0]!.message.content).toBe(alone[order[i]!]!);
    });
  });

  test("completions name an adapter the same way", async () => {
    const complete = (model: string) => client.completions.create({ model, prompt: "Once upon a time", max_tokens: 8, temperature: 0 });
    const [base, b] = await Promise.all([complete(BASE), complete("b")]);
    expect(b.model).toBe("b");
    expect(b.choices[0]!.text).not.toBe(base.choices[0]!.text);
    expect((await complete("b")).choices[0]!.text).toBe(b.choices[0]!.text);
  });

  test("/metrics reports --max-loras in vllm:lora_requests_info", async () => {
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(samples(metrics, "vllm:lora_requests_info")[0]!.labels).toMatchObject({ max_lora: "2", running_lora_adapters: "", waiting_lora_adapters: "" });
  });
});

describe("vllm:lora_requests_info under load", () => {
  /** A streamed request that holds its sequence for a long while, once its first chunk came; `done` when it ends. */
  async function longStream(model: string): Promise<{ done: Promise<void> }> {
    const stream = await client.chat.completions.create({ ...question(model), max_tokens: 900, stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const done = (async () => {
      while (!(await iterator.next()).done);
    })();
    return { done };
  }
  const lora = async () => {
    const labels = samples(await (await fetch(`${server.baseUrl}/metrics`)).text(), "vllm:lora_requests_info")[0]!.labels;
    const names = (list: string) => list.split(",").filter(Boolean).sort();
    return { running: names(labels.running_lora_adapters!), waiting: names(labels.waiting_lora_adapters!) };
  };

  test("names the adapters of running requests, and one beyond --max-loras as waiting until a running one ends", async () => {
    await load({ lora_name: "c", lora_path: paths.b });
    try {
      const ends = [(await longStream("a")).done, (await longStream("b")).done];
      expect(await lora()).toEqual({ running: ["a", "b"], waiting: [] });
      const third = client.chat.completions.create(question("c"));
      const deadline = Date.now() + 10_000;
      let seen = await lora();
      while (seen.waiting.length === 0 && Date.now() < deadline) seen = await lora();
      expect(seen).toEqual({ running: ["a", "b"], waiting: ["c"] });
      await Promise.all([...ends, third]);
      expect(await lora()).toEqual({ running: [], waiting: [] });
    } finally {
      await unload({ lora_name: "c" });
    }
  });
});

describe("loading and unloading at run time", () => {
  test("a loaded adapter is listed and served; unloaded, it is a model that does not exist", async () => {
    expect(await load({ lora_name: "c", lora_path: paths.b })).toBe("Success: LoRA adapter 'c' added successfully.");
    expect((await client.models.list()).data.map((m) => m.id)).toContain("c");
    expect(await chat("c")).toBe(await chat("b"));
    expect(await unload({ lora_name: "c" })).toBe("Success: LoRA adapter 'c' removed successfully.");
    expect((await client.models.list()).data.map((m) => m.id)).not.toContain("c");
    expect(await refusal(chat("c"))).toEqual({
      status: 404, error: { message: "The model `c` does not exist.", type: "NotFoundError", param: "model", code: 404 },
    });
  });

  test("load_inplace replaces an adapter's file under its name", async () => {
    expect(await refusal(load({ lora_name: "a", lora_path: paths.b }))).toEqual({
      status: 400,
      error: {
        message: "The lora adapter 'a' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.",
        type: "InvalidUserInput", param: null, code: 400,
      },
    });
    const before = await chat("a");
    await load({ lora_name: "a", lora_path: paths.b, load_inplace: true });
    expect(await chat("a")).toBe(await chat("b"));
    await load({ lora_name: "a", lora_path: paths.a, load_inplace: true });
    expect(await chat("a")).toBe(before);
  });

  test("bad adapters get vLLM's error shape: a missing file, another architecture, not a LoRA", async () => {
    expect(await refusal(load({ lora_name: "x", lora_path: "/nonexistent/adapter.gguf" }))).toEqual({
      status: 404, error: { message: "Loading lora x failed: No adapter found for /nonexistent/adapter.gguf", type: "NotFoundError", param: null, code: 404 },
    });
    const other = await refusal(load({ lora_name: "x", lora_path: paths.lfm2 }));
    expect(other).toMatchObject({ status: 400, error: { type: "BadRequestError", code: 400 } });
    expect((other.error as { message: string }).message).toBe(`Loading lora x failed: "${paths.lfm2}" is for architecture "lfm2", but the model is "llama"`);
    const notLora = await refusal(load({ lora_name: "x", lora_path: paths.model }));
    expect(notLora).toMatchObject({ status: 400, error: { type: "BadRequestError", code: 400 } });
    expect((notLora.error as { message: string }).message).toContain("is not a LoRA adapter");
    expect(await refusal(load({ lora_name: "x" }))).toMatchObject({
      status: 400, error: { message: "Both 'lora_name' and 'lora_path' must be provided.", type: "InvalidUserInput" },
    });
    expect(await refusal(unload({ lora_name: "x" }))).toEqual({
      status: 404, error: { message: "The lora adapter 'x' cannot be found.", type: "NotFoundError", param: null, code: 404 },
    });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual([BASE, "a", "b"]);
    // the engine goes on serving
    expect(await chat("a")).toBeString();
  });
});

describe("without the flags", () => {
  test("the load routes exist only with VLLM_ALLOW_RUNTIME_LORA_UPDATING, and load without --enable-lora is refused", async () => {
    const models = new ModelService(new ModelManager(), [], { parallel: 1, contextPerSequence: 256 });
    const closed = createApp({ profile: profiles.b, models });
    const body = { method: "POST", body: JSON.stringify({ lora_name: "a", lora_path: "/x.gguf" }), headers: { "content-type": "application/json" } };
    expect((await closed.request("/v1/load_lora_adapter", body)).status).toBe(404);
    const open = createApp({ profile: profiles.b, models, runtimeLoraUpdating: true });
    const answer = await open.request("/v1/load_lora_adapter", body);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: { message: "LoRA is not enabled. Use --enable-lora to enable LoRA.", type: "BadRequestError" } });
  });

  test("--lora-modules takes vLLM's forms and refuses what vLLM refuses", () => {
    expect(expandLoraModules(["m.gguf", "--lora-modules", "a=/a.gguf", '{"name":"b","path":"/b.gguf"}', "--enable-lora"]))
      .toEqual(["m.gguf", "--lora-modules", "a=/a.gguf", "--lora-modules", '{"name":"b","path":"/b.gguf"}', "--enable-lora"]);
    expect(loraFromFlags({ "enable-lora": true, "lora-modules": ["a=/a.gguf", '{"name":"b","path":"/b.gguf","base_model_name":"m"}'] })).toEqual({
      modules: [{ name: "a", path: "/a.gguf" }, { name: "b", path: "/b.gguf", base: "m" }], maxLoras: 1, maxRank: 16,
    });
    expect(loraFromFlags({})).toBeUndefined();
    expect(() => loraFromFlags({ "lora-modules": ["a=/a.gguf"] })).toThrow("--lora-modules needs --enable-lora");
    expect(() => loraFromFlags({ "enable-lora": true, "lora-modules": ["{not json"] })).toThrow("Invalid JSON format for --lora-modules: {not json");
    expect(() => loraFromFlags({ "enable-lora": true, "lora-modules": ['{"name":"b"}'] })).toThrow("Invalid fields for --lora-modules");
    expect(() => loraFromFlags({ "enable-lora": true, "lora-modules": ["a=/a.gguf", "a=/b.gguf"] })).toThrow('names "a" twice');
    expect(() => loraFromFlags({ "enable-lora": true, "max-loras": "0" })).toThrow("--max-loras must be a whole number");
  });
});
