// The OpenAI-compatible API end to end: a real `llamux serve` on loopback, the official `openai` npm
// client, generated models. One server per profile is shared by the whole file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let chatModel: string;
let embeddingModel: string;
const servers: Partial<Record<"a" | "b" | "c", RunningServer>> = {};
const clients: Partial<Record<"a" | "b" | "c", OpenAI>> = {};

beforeAll(async () => {
  chatModel = await ensureModel("tiny-llama");
  embeddingModel = await ensureModel("tiny-bert");
  for (const profile of ["a", "b", "c"] as const) {
    const server = await startServer([chatModel, "--profile", profile, "--served-model-name", "org/tiny-chat", "--ctx-size", "1024"]);
    servers[profile] = server;
    clients[profile] = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "placeholder", maxRetries: 0 });
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
});

const messages = [{ role: "user" as const, content: "Tell me a story" }];

describe.each(["a", "b", "c"] as const)("profile %s", (profile) => {
  const client = () => clients[profile]!;

  test("chat completion returns content, finish reason and usage", async () => {
    const completion = await client().chat.completions.create({ model: "org/tiny-chat", messages, max_tokens: 8, temperature: 0 });
    expect(completion.object).toBe("chat.completion");
    expect(completion.id).toStartWith("chatcmpl-");
    expect(completion.model).toBe("org/tiny-chat");
    expect(typeof completion.choices[0]!.message.content).toBe("string");
    expect(completion.choices[0]!.message.role).toBe("assistant");
    expect(["length", "stop"]).toContain(completion.choices[0]!.finish_reason);
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(8);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
  });

  test("streamed chat: role first, deltas, one finish chunk, usage when asked", async () => {
    const stream = await client().chat.completions.create({
      model: "org/tiny-chat", messages, max_tokens: 6, temperature: 0, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    const finishes = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finishes).toHaveLength(1);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage!.completion_tokens).toBeGreaterThan(0);
    const streamed = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    const whole = await client().chat.completions.create({ model: "org/tiny-chat", messages, max_tokens: 6, temperature: 0 });
    expect(streamed).toBe(whole.choices[0]!.message.content!);
  });

  test("an unknown model is a 404 NotFoundError (profile c: the served model answers, as in LM Studio)", async () => {
    if (profile === "c") {
      const completion = await client().chat.completions.create({ model: "no/such-model", messages, max_tokens: 2 });
      expect(completion.model).toBe("org/tiny-chat");
      return;
    }
    const error = await client().chat.completions.create({ model: "no/such-model", messages }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.status).toBe(404);
    expect(error.message).toContain("no/such-model");
  });

  test("a field of the wrong type is a 400 naming the field", async () => {
    const error = await client().chat.completions.create({ model: "org/tiny-chat", messages, temperature: "hot" as unknown as number }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("temperature");
  });

  test("text completions and embeddings", async () => {
    const completion = await client().completions.create({ model: "org/tiny-chat", prompt: "Hello", max_tokens: 3, temperature: 0 });
    expect(completion.choices[0]!.text.length).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens).toBe(3);
    const embedding = await client().embeddings.create({ model: embeddingModel, input: "some text" });
    expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0);
  });

  test("models are listed and retrieved by ids containing a slash", async () => {
    const list = await client().models.list();
    expect(list.data.map((m) => m.id)).toContain("org/tiny-chat");
    const model = await client().models.retrieve("org/tiny-chat");
    expect(model.id).toBe("org/tiny-chat");
  });
});

describe("vLLM extras and validation (profile b)", () => {
  const client = () => clients.b!;

  test("extra body fields: stop_token_ids, min_tokens, include_stop_str_in_output, ignore_eos", async () => {
    const free = await client().chat.completions.create({ model: "org/tiny-chat", messages, max_tokens: 10, temperature: 0, ignore_eos: true } as never) as OpenAI.ChatCompletion;
    const text = free.choices[0]!.message.content!;
    const stop = text.slice(3, 6);
    const withStop = await client().chat.completions.create({
      model: "org/tiny-chat", messages, max_tokens: 10, temperature: 0, ignore_eos: true, stop: [stop], include_stop_str_in_output: true,
    } as never) as OpenAI.ChatCompletion;
    expect(withStop.choices[0]!.message.content).toBe(text.slice(0, text.indexOf(stop) + stop.length));
    expect(withStop.choices[0]!.finish_reason).toBe("stop");
    expect((withStop.choices[0] as unknown as { stop_reason: string }).stop_reason).toBe(stop);
    const minTokens = await client().chat.completions.create({
      model: "org/tiny-chat", messages, max_tokens: 6, min_tokens: 6, temperature: 0, top_k: 5, min_p: 0.01, repetition_penalty: 1.1,
    } as never) as OpenAI.ChatCompletion;
    expect(minTokens.usage!.completion_tokens).toBe(6);
    // Force token 1000 with a logit bias, then make it a stop token: nothing is generated before it.
    const stopped = await client().chat.completions.create({
      model: "org/tiny-chat", messages, max_tokens: 5, temperature: 0, logit_bias: { "1000": 100 }, stop_token_ids: [1000],
    } as never) as OpenAI.ChatCompletion;
    expect(stopped.choices[0]!.message.content).toBe("");
    expect(stopped.choices[0]!.finish_reason).toBe("stop");
    expect((stopped.choices[0] as unknown as { stop_reason: number }).stop_reason).toBe(1000);
  });

  test("skip_special_tokens=false writes special tokens into the text", async () => {
    // Force <|im_start|>, a control token, twice; it is left out of the text unless asked for.
    const [imStart] = (await (await fetch(`${servers.b!.baseUrl}/tokenize`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ prompt: "<|im_start|>", add_special_tokens: false }),
    })).json() as { tokens: number[] }).tokens;
    const body = { model: "org/tiny-chat", messages, max_tokens: 2, temperature: 0, logit_bias: { [String(imStart)]: 100 } };
    const hidden = await client().chat.completions.create(body as never) as OpenAI.ChatCompletion;
    const shown = await client().chat.completions.create({ ...body, skip_special_tokens: false } as never) as OpenAI.ChatCompletion;
    expect(hidden.choices[0]!.message.content).toBe("");
    expect(shown.choices[0]!.message.content).toBe("<|im_start|><|im_start|>");
  });

  test("n choices are sampled in parallel; n > 1 with temperature 0 is refused", async () => {
    const completion = await client().chat.completions.create({ model: "org/tiny-chat", messages, max_tokens: 5, n: 3, temperature: 1, seed: 5 });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    const error = await client().chat.completions.create({ model: "org/tiny-chat", messages, n: 2, temperature: 0 }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("n must be 1 when using greedy sampling");
  });

  test("logprobs report the chosen tokens and alternatives", async () => {
    const completion = await client().chat.completions.create({ model: "org/tiny-chat", messages, max_tokens: 3, temperature: 0, logprobs: true, top_logprobs: 2 });
    const content = completion.choices[0]!.logprobs!.content!;
    expect(content).toHaveLength(completion.usage!.completion_tokens);
    expect(content.map((c) => c.token).join("")).toBe(completion.choices[0]!.message.content!);
    expect(content[0]!.top_logprobs).toHaveLength(2);
  });

  test("a prompt plus max_tokens beyond the context is a 400 with vLLM's reason", async () => {
    const error = await client().chat.completions.create({ model: "org/tiny-chat", messages, max_tokens: 5000 }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("This model's maximum context length is 1024 tokens");
  });

  test("text completions take a list of prompts and echo", async () => {
    const completion = await client().completions.create({ model: "org/tiny-chat", prompt: ["Hello", "World"], max_tokens: 3, temperature: 0, echo: true });
    expect(completion.object).toBe("text_completion");
    expect(completion.choices).toHaveLength(2);
    expect(completion.choices[0]!.text).toStartWith("Hello");
    expect(completion.choices[1]!.text).toStartWith("World");
    const chunks = [];
    for await (const chunk of await client().completions.create({ model: "org/tiny-chat", prompt: "Hello", max_tokens: 3, temperature: 0, stream: true })) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.text ?? "").join("")).toBe(
      (await client().completions.create({ model: "org/tiny-chat", prompt: "Hello", max_tokens: 3, temperature: 0 })).choices[0]!.text);
  });

  test("text completions take token ids through the client: one list or several, echoed as their text", async () => {
    const tokenized = await fetch(`${servers.b!.baseUrl}/tokenize`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "org/tiny-chat", prompt: "Hello world", add_special_tokens: false }),
    });
    const ids = ((await tokenized.json()) as { tokens: number[] }).tokens;
    expect(ids.length).toBeGreaterThan(1);
    const greedy = { model: "org/tiny-chat", max_tokens: 4, temperature: 0, ignore_eos: true } as const;
    const fromText = await client().completions.create({ ...greedy, prompt: "Hello world" } as never) as OpenAI.Completion;
    const fromIds = await client().completions.create({ ...greedy, prompt: ids } as never) as OpenAI.Completion;
    expect(fromIds.choices[0]!.text).toBe(fromText.choices[0]!.text);
    expect(fromIds.usage!.prompt_tokens).toBe(ids.length);
    expect(fromIds.usage!.completion_tokens).toBe(4);

    const both = await client().completions.create({ model: "org/tiny-chat", prompt: [ids, ids.slice(0, 1)], max_tokens: 2, n: 2, temperature: 1, seed: 4, echo: true });
    expect(both.choices.map((choice) => choice.index)).toEqual([0, 1, 2, 3]);
    expect(both.choices[0]!.text).toStartWith("Hello world");
    expect(both.choices[1]!.text).toStartWith("Hello world");
    expect(both.choices[3]!.text).toStartWith("Hello");
    expect(both.usage!.prompt_tokens).toBe(ids.length + 1);
    expect(both.usage!.completion_tokens).toBe(8);

    const chunks: OpenAI.Completion[] = [];
    for await (const chunk of await client().completions.create({ ...greedy, prompt: ids, stream: true } as never) as unknown as AsyncIterable<OpenAI.Completion>) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices[0]?.text ?? "").join("")).toBe(fromIds.choices[0]!.text);

    // One prompt that cannot fit refuses the whole request (the others' choices are cancelled), in vLLM's words.
    const long = Array.from({ length: 1100 }, (_, i) => ids[i % ids.length]!);
    const refused = await client().completions.create({ ...greedy, prompt: [ids, long] } as never).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as Error).message).toContain("This model's maximum context length is 1024 tokens. However, your request has 1100 input tokens.");
    expect((await client().completions.create({ ...greedy, prompt: ids } as never) as OpenAI.Completion).choices[0]!.text).toBe(fromIds.choices[0]!.text);
  });

  test("embeddings as floats and as base64 decode to the same vectors", async () => {
    const floats = await client().embeddings.create({ model: embeddingModel, input: ["first text", "second text"], encoding_format: "float" });
    // Without encoding_format the client asks for base64 and decodes it itself.
    const decoded = await client().embeddings.create({ model: embeddingModel, input: ["first text", "second text"] });
    expect(floats.data).toHaveLength(2);
    expect(floats.data[0]!.embedding.length).toBeGreaterThan(0);
    for (let i = 0; i < 2; i++) {
      const a = floats.data[i]!.embedding;
      const b = decoded.data[i]!.embedding;
      expect(b.length).toBe(a.length);
      for (let j = 0; j < a.length; j++) expect(b[j]!).toBeCloseTo(a[j]!, 5);
    }
    expect(floats.usage.prompt_tokens).toBeGreaterThan(0);
    const error = await client().embeddings.create({ model: "org/tiny-chat", input: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe("text completions run through the chat orchestrator", () => {
  test("a token prompt longer than the context grows it, as a chat does (profile a)", async () => {
    const tokenized = await fetch(`${servers.b!.baseUrl}/tokenize`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "org/tiny-chat", prompt: "Once upon a time", add_special_tokens: false }),
    });
    const ids = ((await tokenized.json()) as { tokens: number[] }).tokens;
    const long = Array.from({ length: 1100 }, (_, i) => ids[i % ids.length]!);
    const completion = await clients.a!.completions.create({ model: "org/tiny-chat", prompt: long, max_tokens: 2, temperature: 0, ignore_eos: true } as never) as OpenAI.Completion;
    expect(completion.usage).toMatchObject({ prompt_tokens: 1100, completion_tokens: 2 });
  }, 120_000);
});

describe("streaming over raw HTTP", () => {
  test("SSE framing: data lines, blank-line separated, ending with [DONE]", async () => {
    const response = await fetch(`${servers.b!.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages, max_tokens: 3, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const body = await response.text();
    const events = body.split("\n\n").filter(Boolean);
    expect(events.every((e) => e.startsWith("data: "))).toBe(true);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(events[0]!.slice(6)).object).toBe("chat.completion.chunk");
  });

  test("error bodies have each profile's shape", async () => {
    // Profile c answers any model name with its model, so its error here is an empty message list.
    const post = (profile: "a" | "b" | "c") => fetch(`${servers[profile]!.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "missing", messages: profile === "c" ? [] : messages }),
    });
    const [a, b, c] = await Promise.all([post("a"), post("b"), post("c")]);
    expect([a.status, b.status, c.status]).toEqual([404, 404, 400]);
    type ErrorBody = { error: Record<string, unknown> };
    expect(((await a.json()) as ErrorBody).error).toMatchObject({ type: "not_found_error", code: null });
    expect(((await b.json()) as ErrorBody).error).toMatchObject({ type: "NotFoundError", code: 404, param: "model", message: "The model `missing` does not exist." });
    expect(((await c.json()) as ErrorBody).error).toMatchObject({ type: "invalid_request_error", param: "messages", code: null });
    const invalid = await fetch(`${servers.b!.baseUrl}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{oops" });
    expect(invalid.status).toBe(400);
  });
});

test("the request log shows status, latency and token counts", async () => {
  const server = await startServer([chatModel, "--profile", "c"], { LLAMUX_LOG_LEVEL: "info" });
  try {
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "x", maxRetries: 0 });
    await client.chat.completions.create({ model: "", messages, max_tokens: 3, temperature: 0, ignore_eos: true } as never);
    const stream = await client.chat.completions.create({ model: "", messages, max_tokens: 2, temperature: 0, stream: true, ignore_eos: true } as never) as unknown as AsyncIterable<unknown>;
    for await (const _ of stream) { /* drain */ }
    // The streamed request's line is written once its stream has ended: wait for it rather than for time.
    await server.logged(/POST \/v1\/chat\/completions 200 [\d.]+ ms stream prompt_tokens=\d+ completion_tokens=2/);
    expect(server.stderr()).toMatch(/POST \/v1\/chat\/completions 200 [\d.]+ ms prompt_tokens=\d+ completion_tokens=3/);
  } finally {
    await server.stop();
  }
}, 60_000);

describe("concurrency and disconnects", () => {
  let single: RunningServer;
  beforeAll(async () => {
    single = await startServer([chatModel, "--profile", "b", "--parallel", "1", "--max-queue", "1", "--ctx-size", "2048"]);
  }, 60_000);
  afterAll(() => single.stop());

  test("a client that disconnects mid-stream frees its sequence for the next request", async () => {
    const controller = new AbortController();
    const response = await fetch(`${single.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, signal: controller.signal,
      body: JSON.stringify({ messages, max_tokens: 1500, ignore_eos: true, stream: true }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    controller.abort();
    // With one sequence, this request could only start once the abandoned one was cancelled.
    const client = new OpenAI({ baseURL: `${single.baseUrl}/v1`, apiKey: "x", maxRetries: 0, timeout: 20_000 });
    const next = await client.chat.completions.create({ model: "", messages, max_tokens: 4, temperature: 0 });
    expect(next.choices[0]!.finish_reason).toBe("length");
  });

  test("over the queue bound a request gets 503 in the profile's shape, and the server stays up", async () => {
    const controller = new AbortController();
    const post = (maxTokens: number, signal?: AbortSignal) => fetch(`${single.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, signal,
      body: JSON.stringify({ messages, max_tokens: maxTokens, ignore_eos: true, stream: true }),
    });
    // One long request runs, one waits for the single sequence; the third finds the queue full.
    const running = await post(1500, controller.signal);
    expect(running.status).toBe(200);
    // Keep reading: an unread response can be collected, closing its connection and cancelling it.
    const runningBody = running.text().catch(() => undefined);
    const waiting = post(1500, controller.signal).then((r) => r.text()).catch(() => undefined);
    const queued = async () => /^vllm:num_requests_waiting\{[^}]*\} 1$/m.test(await (await fetch(`${single.baseUrl}/metrics`)).text());
    let isQueued = false;
    for (let i = 0; i < 200 && !(isQueued = await queued()); i++) await Bun.sleep(25);
    expect(isQueued).toBe(true);
    const refused = await post(4);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: 503 });
    controller.abort();
    await Promise.all([runningBody, waiting]);
    const client = new OpenAI({ baseURL: `${single.baseUrl}/v1`, apiKey: "x", maxRetries: 0, timeout: 20_000 });
    expect((await client.chat.completions.create({ model: "", messages, max_tokens: 2 })).choices).toHaveLength(1);
  });

  test("a model file that is not GGUF is a 400 naming it; the server keeps serving", async () => {
    const broken = join(tmpdir(), `broken-${process.pid}.gguf`);
    writeFileSync(broken, "not a gguf file at all");
    try {
      const response = await fetch(`${single.baseUrl}/v1/chat/completions`, {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: broken, messages }),
      });
      expect(response.status).toBe(400);
      const message = ((await response.json()) as { error: { message: string } }).error.message;
      expect(message).toBe(`Cannot load model "${broken}": file is not GGUF`);
      const client = new OpenAI({ baseURL: `${single.baseUrl}/v1`, apiKey: "x", maxRetries: 0 });
      expect((await client.chat.completions.create({ model: "", messages, max_tokens: 2 })).choices).toHaveLength(1);
    } finally {
      rmSync(broken, { force: true });
    }
  });

  test("16 concurrent streams all finish, sharing decode steps where one at a time cannot", async () => {
    // Throughput is measured in decode steps, not seconds: deterministic on a busy machine, and the
    // reason batching is faster (the benchmark measures the seconds).
    const client = clients.b!;
    const engineCounters = async () => {
      const text = await (await fetch(`${servers.b!.baseUrl}/metrics`)).text();
      const read = (name: string) => Number(text.match(new RegExp(`^${name}\\{[^}]*model_name="org/tiny-chat"[^}]*\\} (\\S+)$`, "m"))?.[1] ?? NaN);
      return { steps: read("llamux:decode_steps"), tokens: read("llamux:decoded_tokens") };
    };
    const stream = async () => {
      let tokens = 0;
      const s = await client.chat.completions.create({
        model: "org/tiny-chat", messages, max_tokens: 24, ignore_eos: true, stream: true, stream_options: { include_usage: true },
      } as never) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
      for await (const chunk of s) if (chunk.usage) tokens = chunk.usage.completion_tokens;
      return tokens;
    };
    let before = await engineCounters();
    for (let i = 0; i < 4; i++) expect(await stream()).toBe(24);
    let after = await engineCounters();
    const sequentialStepsPerRequest = (after.steps - before.steps) / 4;
    before = after;
    const counts = await Promise.all(Array.from({ length: 16 }, stream));
    after = await engineCounters();
    expect(counts.every((n) => n === 24)).toBe(true);
    const concurrentStepsPerRequest = (after.steps - before.steps) / 16;
    // One at a time, each generated token costs a step; four sequences per step share them.
    expect(sequentialStepsPerRequest).toBeGreaterThanOrEqual(24);
    expect(concurrentStepsPerRequest).toBeLessThan(sequentialStepsPerRequest / 2);
  }, 120_000);
});
