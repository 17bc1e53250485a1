// Prompt progress and keep-alives on a prompt that spans several decode steps (three 512-token steps), end
// to end against a real `llamux serve --profile c` with the real clients where they expose it: llama-server's
// return_progress on /v1/chat/completions (raw SSE, and the openai client reading the chunks), SSE comments
// without it, `ping` events on Messages streams (raw SSE, and the Anthropic client streaming through them),
// LM Studio's /api/v1/chat prompt_processing events, and the LM Studio SDK's onPromptProcessingProgress.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { LMStudioClient } from "@lmstudio/sdk";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";
import { quietLogger } from "./lmstudio-sdk-fixture.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let server: RunningServer;
// about 1,300 tokens: three steps of the default 512-token batch
const longText = `Summarise: ${"the dragon flew over the hills and far away ".repeat(140)}`;
let tag = 0;
/** A fresh long prompt each time, so that no cached prefix shortens it. */
const longPrompt = () => `${++tag} ${longText}`;

beforeAll(async () => {
  const model = await ensureModel("tiny-llama");
  server = await startServer([model, "--served-model-name", "served-chat", "--profile", "c", "--ctx-size", "2048", "--parallel", "2"]);
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

/** The raw SSE of a POST: each event's name (or "comment") and data, in order. */
async function sse(path: string, body: unknown): Promise<Array<{ event: string; data: string }>> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: "POST", headers: { "content-type": "application/json", "x-api-key": "none" }, body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const events: Array<{ event: string; data: string }> = [];
  for (const block of (await response.text()).split("\n\n")) {
    if (!block.trim()) continue;
    const lines = block.split("\n");
    if (lines.every((line) => line.startsWith(":"))) {
      events.push({ event: "comment", data: lines.join("\n") });
      continue;
    }
    const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim() ?? "message";
    const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n");
    events.push({ event, data });
  }
  return events;
}

/** Progress values strictly increase and end at `end`. */
function expectRisingTo(values: number[], end: number): void {
  expect(values.length).toBeGreaterThanOrEqual(2);
  expect(values.every((value, i) => i === 0 || value > values[i - 1]!)).toBe(true);
  expect(values.at(-1)).toBe(end);
}

describe("/v1/chat/completions", () => {
  test("return_progress streams prompt_progress chunks, in order up to the whole prompt, before the first content", async () => {
    const events = await sse("/v1/chat/completions", {
      model: "served-chat", messages: [{ role: "user", content: longPrompt() }], stream: true, return_progress: true, max_tokens: 3, temperature: 0,
    });
    const chunks = events.filter((e) => e.data !== "[DONE]" && e.event !== "comment").map((e) => JSON.parse(e.data) as Json);
    const progressAt = chunks.flatMap((chunk, i) => chunk.prompt_progress ? [i] : []);
    const progress = progressAt.map((i) => chunks[i]!.prompt_progress as Json);
    expect(progress.every((p) => p.total === progress[0]!.total && p.cache === 0 && Number.isInteger(p.time_ms))).toBe(true);
    expect(progress[0]!.total).toBeGreaterThan(1024);
    expectRisingTo(progress.map((p) => p.processed), progress[0]!.total);
    const firstContent = chunks.findIndex((chunk) => chunk.choices?.[0]?.delta?.content);
    expect(firstContent).toBeGreaterThan(progressAt.at(-1)!);
    expect(events.some((e) => e.event === "comment")).toBe(false);
  });

  test("a short prompt with return_progress gets one chunk, complete", async () => {
    const events = await sse("/v1/chat/completions", {
      model: "served-chat", messages: [{ role: "user", content: "Hi" }], stream: true, return_progress: true, max_tokens: 2,
    });
    const progress = events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Json).filter((c) => c.prompt_progress);
    expect(progress.length).toBe(1);
    expect(progress[0]!.prompt_progress.processed).toBe(progress[0]!.prompt_progress.total);
  });

  test("without return_progress a long prompt's stream carries SSE comments as keep-alives, and no progress chunks", async () => {
    const events = await sse("/v1/chat/completions", {
      model: "served-chat", messages: [{ role: "user", content: longPrompt() }], stream: true, max_tokens: 2,
    });
    const comments = events.filter((e) => e.event === "comment");
    expect(comments.length).toBeGreaterThanOrEqual(2);
    expect(events.some((e) => e.event !== "comment" && e.data.includes("prompt_progress"))).toBe(false);
  });

  test("the openai client reads the progress chunks and the reply through them", async () => {
    const openai = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "none" });
    const body = { model: "served-chat", messages: [{ role: "user" as const, content: longPrompt() }], stream: true as const, max_tokens: 3, return_progress: true };
    const stream = await openai.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsStreaming);
    const processed: number[] = [];
    let total = 0;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const progress = (chunk as unknown as Json).prompt_progress as Json | undefined;
      if (progress) {
        processed.push(progress.processed);
        total = progress.total;
      }
      finish ??= chunk.choices[0]?.finish_reason;
    }
    expectRisingTo(processed, total);
    expect(finish).toBe("length");
  });
});

describe("other SSE streams", () => {
  test("/v1/completions and /v1/responses keep a long prompt's stream alive with SSE comments before the first text", async () => {
    const completions = await sse("/v1/completions", { model: "served-chat", prompt: longPrompt(), stream: true, max_tokens: 2 });
    const firstText = completions.findIndex((e) => e.event !== "comment");
    expect(completions.slice(0, firstText).filter((e) => e.event === "comment").length).toBeGreaterThanOrEqual(2);
    expect(completions.at(-1)!.data).toBe("[DONE]");
    const responses = await sse("/v1/responses", { model: "served-chat", input: longPrompt(), stream: true, max_output_tokens: 16 });
    const names = responses.map((e) => e.event);
    const ends = ["response.completed", "response.incomplete"];
    const firstDelta = names.findIndex((n) => n === "response.output_text.delta" || ends.includes(n));
    expect(names.slice(0, firstDelta).filter((n) => n === "comment").length).toBeGreaterThanOrEqual(2);
    expect(ends).toContain(names.at(-1)!);
  });
});

describe("/v1/messages", () => {
  test("a long prompt's stream pings after message_start at each step, before the first content block", async () => {
    const events = await sse("/v1/messages", {
      model: "served-chat", max_tokens: 2, stream: true, messages: [{ role: "user", content: longPrompt() }],
    });
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    const firstBlock = names.indexOf("content_block_start");
    const pings = names.slice(0, firstBlock === -1 ? names.length : firstBlock).filter((n) => n === "ping");
    // the opening ping and one for each step of the prompt
    expect(pings.length).toBeGreaterThanOrEqual(3);
    expect(names.at(-1)).toBe("message_stop");
  });

  test("the Anthropic client streams a long prompt's reply through the pings", async () => {
    const anthropic = new Anthropic({ baseURL: server.baseUrl, apiKey: "none" });
    const stream = anthropic.messages.stream({ model: "served-chat", max_tokens: 2, messages: [{ role: "user", content: longPrompt() }] });
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage.input_tokens).toBeGreaterThan(1024);
  });
});

describe("LM Studio", () => {
  test("/api/v1/chat streams prompt_processing.progress rising to 1 between start and end, before the message", async () => {
    const events = await sse("/api/v1/chat", { model: "served-chat", input: longPrompt(), stream: true, max_output_tokens: 2 });
    const names = events.map((e) => e.event);
    const start = names.indexOf("prompt_processing.start");
    const end = names.indexOf("prompt_processing.end");
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const progress = events.slice(start, end).filter((e) => e.event === "prompt_processing.progress").map((e) => (JSON.parse(e.data) as Json).progress as number);
    expect(progress.some((p) => p > 0 && p < 1)).toBe(true);
    expectRisingTo(progress, 1);
    expect(names.indexOf("prompt_processing.progress", end)).toBe(-1);
    const message = names.indexOf("message.start");
    if (message !== -1) expect(message).toBeGreaterThan(end);
    expect(names.at(-1)).toBe("chat.end");
  });

  test("the SDK's onPromptProcessingProgress gets real fractions rising from 0 to 1", async () => {
    const client = new LMStudioClient({ baseUrl: server.baseUrl.replace("http://", "ws://"), logger: quietLogger });
    const model = await client.llm.model("served-chat");
    const fractions: number[] = [];
    const result = await model.respond(longPrompt(), { maxTokens: 2, temperature: 0, onPromptProcessingProgress: (progress) => fractions.push(progress) });
    expect(result.stats.predictedTokensCount).toBe(2);
    expect(fractions[0]).toBe(0);
    expect(fractions.some((p) => p > 0 && p < 1)).toBe(true);
    expectRisingTo(fractions, 1);
  });
});
