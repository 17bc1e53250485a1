// The vLLM profile's own endpoints (/health, /ping, /version, /tokenize, /detokenize, /metrics), called
// in-process through the Hono app; tokenizer and metrics tests run a real engine on a generated model.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hono } from "hono";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { llamuxVersion } from "../../../src/cli/version.ts";
import type { ModelInfo } from "../../../src/engine/types.ts";
import { ModelManager } from "../../../src/engine/model-manager.ts";
import { createApp } from "../../../src/server/app.ts";
import { ModelService } from "../../../src/server/model-service.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { createVllmMetrics, oneTwoFiveBuckets } from "../../../src/server/vllm/metrics.ts";
import { sample } from "../../fixtures/prometheus-text.ts";

const MODEL = "org/tiny";
/** A vocabulary that adds BOS (tiny-llama's Qwen vocabulary adds none), for add_special_tokens. */
const BOS_MODEL = "org/tiny-lfm2";
let manager: ModelManager;
let app: Hono;
let info: ModelInfo;
let bosInfo: ModelInfo;

beforeAll(async () => {
  const [path, bosPath] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-lfm2")]);
  manager = new ModelManager();
  const models = new ModelService(manager, [{ path, name: MODEL }, { path: bosPath, name: BOS_MODEL }], { parallel: 2, contextPerSequence: 512 });
  app = createApp({ profile: profiles.b, models, ...createVllmMetrics(manager, models) });
  info = (await models.engine(models.resolve(MODEL))).info;
  bosInfo = (await models.engine(models.resolve(BOS_MODEL))).info;
}, 120_000);

afterAll(async () => {
  await manager.stopAll();
});

const post = (path: string, body: unknown) =>
  app.request(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

interface TokenizeResponse { count: number; max_model_len: number; tokens: number[]; token_strs: string[] | null }

async function tokenize(body: Record<string, unknown>): Promise<TokenizeResponse> {
  const response = await post("/tokenize", body);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenizeResponse;
}

async function detokenize(tokens: number[]): Promise<string> {
  const response = await post("/detokenize", { model: MODEL, tokens });
  expect(response.status).toBe(200);
  return ((await response.json()) as { prompt: string }).prompt;
}

async function scrape(): Promise<string> {
  const response = await app.request("/metrics");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return response.text();
}

describe("vLLM service endpoints", () => {
  test("GET /health, GET /ping and POST /ping answer 200 with an empty body", async () => {
    for (const [method, path] of [["GET", "/health"], ["GET", "/ping"], ["POST", "/ping"]] as const) {
      const response = await app.request(path, { method });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("");
    }
  });

  test("GET /version reports a vLLM version clients accept and llamux's own", async () => {
    const body = (await (await app.request("/version")).json()) as { version: string; llamux_version: string };
    const [major, minor] = body.version.split(".").map(Number);
    expect(major! > 0 || minor! >= 19).toBe(true);
    expect(body.llamux_version).toBe(llamuxVersion);
  });

  test("the endpoints exist on profile b only", async () => {
    const ollamaApp = createApp({ profile: profiles.a, models: new ModelService(manager, [], { parallel: 1, contextPerSequence: 512 }) });
    expect((await ollamaApp.request("/health")).status).toBe(404);
    expect((await ollamaApp.request("/tokenize", { method: "POST", body: "{}" })).status).toBe(404);
  });

  test("an unknown model is vLLM's 404 naming the model", async () => {
    for (const path of ["/tokenize", "/detokenize"]) {
      const response = await post(path, { model: "no-such-model", prompt: "hi", tokens: [1] });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        error: { message: "The model `no-such-model` does not exist.", type: "NotFoundError", param: "model", code: 404 },
      });
    }
  });
});

describe("POST /tokenize and /detokenize", () => {
  const text = "Hello world, this is a test";

  test("prompt form: count, max_model_len, and the first served model when none is named", async () => {
    const named = await tokenize({ model: MODEL, prompt: text });
    expect(named.count).toBe(named.tokens.length);
    expect(named.count).toBeGreaterThan(3);
    expect(named.max_model_len).toBe(512);
    expect(named.token_strs).toBeNull();
    expect(await tokenize({ prompt: text })).toEqual(named);
    expect((await tokenize({ model: BOS_MODEL, prompt: text })).tokens).not.toEqual(named.tokens);
  });

  test("prompt form honours add_special_tokens (default true)", async () => {
    expect(bosInfo.addsBos).toBe(true); // otherwise the BOS assertions below prove nothing
    const withSpecial = await tokenize({ model: BOS_MODEL, prompt: text });
    expect(withSpecial.tokens[0]).toBe(bosInfo.bosToken);
    const without = await tokenize({ model: BOS_MODEL, prompt: text, add_special_tokens: false });
    expect(without.tokens).toEqual(withSpecial.tokens.slice(1));
  });

  test("return_token_strs gives one text per token", async () => {
    const result = await tokenize({ model: MODEL, prompt: text, add_special_tokens: false, return_token_strs: true });
    expect(result.token_strs).toHaveLength(result.count);
    expect(result.token_strs!.join("")).toBe(await detokenize(result.tokens));
  });

  test("detokenize round-trips tokenize", async () => {
    const { tokens } = await tokenize({ model: MODEL, prompt: text, add_special_tokens: false });
    expect(await detokenize(tokens)).toBe(text);
  });

  test("chat form renders the template, and count equals the chat route's prompt_tokens", async () => {
    const messages = [{ role: "user", content: text }];
    const chat = await tokenize({ model: MODEL, messages });
    const plain = await tokenize({ model: MODEL, prompt: text, add_special_tokens: false });
    expect(chat.count).toBe(chat.tokens.length);
    expect(chat.count).toBeGreaterThan(plain.count);
    const rendered = await detokenize(chat.tokens);
    expect(rendered).toContain(text);
    expect(rendered).not.toBe(await detokenize(plain.tokens));

    const completion = await post("/v1/chat/completions", { model: MODEL, messages, max_tokens: 1 });
    const usage = ((await completion.json()) as { usage: { prompt_tokens: number } }).usage;
    expect(chat.count).toBe(usage.prompt_tokens);

    const noGenerationPrompt = await tokenize({ messages, add_generation_prompt: false });
    expect(noGenerationPrompt.count).toBeLessThan(chat.count);
  });

  test("chat form: a template that writes BOS gets no second one unless add_special_tokens asks", async () => {
    const messages = [{ role: "user", content: text }];
    const unset = await tokenize({ model: BOS_MODEL, messages });
    expect(unset.tokens[0]).toBe(bosInfo.bosToken);
    expect(unset.tokens[1]).not.toBe(bosInfo.bosToken);
    expect(await tokenize({ model: BOS_MODEL, messages, add_special_tokens: false })).toEqual(unset);
    const explicit = await tokenize({ model: BOS_MODEL, messages, add_special_tokens: true });
    expect(explicit.tokens).toEqual([bosInfo.bosToken, ...unset.tokens]);
  });

  test("chat form continue_final_message ends at the final message's text", async () => {
    const messages = [{ role: "user", content: "Hi" }, { role: "assistant", content: "Once upon a time" }];
    const open = await tokenize({ messages, add_generation_prompt: false, continue_final_message: true });
    const closed = await tokenize({ messages, add_generation_prompt: false });
    expect(open.count).toBeLessThan(closed.count);
    expect((await detokenize(open.tokens)).endsWith("Once upon a time")).toBe(true);
  });

  test("/v1/completions echoes a text prompt as it was sent: a vocabulary's BOS is counted, not echoed", async () => {
    const response = await post("/v1/completions", { model: BOS_MODEL, prompt: text, max_tokens: 1, temperature: 0, echo: true });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as { choices: Array<{ text: string }>; usage: { prompt_tokens: number } };
    expect(completion.choices[0]!.text).toStartWith(text);
    expect(completion.usage.prompt_tokens).toBe((await tokenize({ model: BOS_MODEL, prompt: text })).count);
  });

  test("bad requests are vLLM-shaped 400s", async () => {
    const cases: Array<[string, unknown, string | null]> = [
      ["/tokenize", { model: MODEL }, "prompt"],
      ["/tokenize", { messages: [{ role: "user", content: "x" }], continue_final_message: true }, null],
      ["/tokenize", { messages: [{ role: "user", content: "x" }], chat_template: "{{ 1 }}" }, "chat_template"],
      ["/tokenize", { prompt: 5 }, "prompt"],
      ["/detokenize", { tokens: [info.vocabularySize] }, "tokens"],
      ["/detokenize", { tokens: [-1] }, "tokens[0]"],
    ];
    for (const [path, body, param] of cases) {
      const response = await post(path, body);
      expect(response.status).toBe(400);
      const error = ((await response.json()) as { error: { type: string; code: number; param: string | null } }).error;
      expect(error).toMatchObject({ type: "BadRequestError", code: 400, param });
    }
    // The engine survived the out-of-vocabulary id.
    expect(await detokenize([info.bosToken])).toBeString();
  });
});

describe("GET /metrics", () => {
  const labels = { model_name: MODEL, engine: "0" };

  test("vLLM's gauges are present and within range", async () => {
    const text = await scrape();
    expect(sample(text, "vllm:num_requests_running", labels)).toBe(0);
    expect(sample(text, "vllm:num_requests_waiting", labels)).toBe(0);
    const usage = sample(text, "vllm:kv_cache_usage_perc", labels)!;
    expect(usage).toBeGreaterThanOrEqual(0);
    expect(usage).toBeLessThanOrEqual(1);
    expect(text).toContain("# TYPE vllm:time_to_first_token_seconds histogram");
    expect(sample(text, "vllm:request_success_total", { ...labels, finished_reason: "abort" })).toBeNumber();
    // counted when a cold prompt gives its sequence to a warm turn (test/engine/scheduler.test.ts "preemption")
    expect(text).toContain("# TYPE vllm:num_preemptions_total counter");
    expect(sample(text, "vllm:num_preemptions_total", labels)).toBe(0);
  });

  test("a chat completion moves the counters and histograms by its usage", async () => {
    const before = await scrape();
    const response = await post("/v1/chat/completions", {
      model: MODEL, messages: [{ role: "user", content: "Count to ten" }], max_tokens: 5, ignore_eos: true, temperature: 0,
    });
    expect(response.status).toBe(200);
    const usage = ((await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    expect(usage.completion_tokens).toBe(5);
    const after = await scrape();
    const delta = (name: string, extra: Record<string, string> = {}) =>
      (sample(after, name, { ...labels, ...extra }) ?? NaN) - (sample(before, name, { ...labels, ...extra }) ?? NaN);

    expect(delta("vllm:prompt_tokens_total")).toBe(usage.prompt_tokens);
    expect(delta("vllm:generation_tokens_total")).toBe(5);
    expect(delta("vllm:request_success_total", { finished_reason: "length" })).toBe(1);
    expect(delta("vllm:request_success_total", { finished_reason: "stop" })).toBe(0);
    for (const histogram of ["vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_prompt_tokens"]) {
      expect(delta(`${histogram}_count`)).toBe(1);
    }
    expect(delta("vllm:request_prompt_tokens_sum")).toBe(usage.prompt_tokens);
    expect(delta("vllm:request_generation_tokens_sum")).toBe(5);
    // One inter-token gap per token after the first.
    expect(delta("vllm:inter_token_latency_seconds_count")).toBe(4);
    expect(delta("vllm:inter_token_latency_seconds_sum")).toBeGreaterThan(0);
    // The finished request's tokens stay in the engine's memory as a reusable prefix, which vLLM counts as
    // free (its cached blocks can be evicted at any time): the gauge counts running sequences' cells only.
    expect(sample(after, "vllm:kv_cache_usage_perc", labels)).toBe(0);
  }, 60_000);
});

test("oneTwoFiveBuckets follows vLLM's build_1_2_5_buckets", () => {
  expect(oneTwoFiveBuckets(100)).toEqual([1, 2, 5, 10, 20, 50, 100]);
  expect(oneTwoFiveBuckets(4)).toEqual([1, 2]);
});
