// The official `ollama` client (pinned) pointed at profile a: chat and generate, streaming with token
// counts, tools with required and named choice (llamux's tool_choice on /api/chat; Ollama itself has
// none), a tool round trip with tool_name, structured output from zod schemas as `format`, images, and
// the model listing calls clients make first. One server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Ollama, type ChatRequest, type Message, type Tool } from "ollama";
import { z } from "zod";
import {
  type ClientServer, IMAGE_TOKENS, MODEL, forecastSchema, jpeg, openAiTools, parseToolCall, positiveSchema, question, recordSchema, searchInput,
  startClientServer,
} from "./client-fixture.ts";

let server: ClientServer;
let ollama: Ollama;

beforeAll(async () => {
  server = await startClientServer("a");
  ollama = new Ollama({ host: server.baseUrl });
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

/** Grammar-constrained replies run at a few tokens a second on a busy 2-core machine. */
const SLOW = 300_000;
const messages: Message[] = [{ role: "user", content: question }];
/** The tools' JSON schemas as zod writes them (the client's Tool type is narrower than JSON Schema). */
const tools = openAiTools as unknown as Tool[];
/** tool_choice is llamux's addition to Ollama's chat request; the client passes it through. */
type ChatWithChoice = ChatRequest & { stream: false; tool_choice: unknown };

test("list, show and ps: the calls clients make before they chat", async () => {
  const { models } = await ollama.list();
  expect(models.map((m) => m.name)).toContain(MODEL);
  const shown = await ollama.show({ model: MODEL });
  expect(shown.capabilities).toEqual(expect.arrayContaining(["completion", "tools", "vision"]));
  await ollama.chat({ model: MODEL, messages: [] });
  expect((await ollama.ps()).models.map((m) => m.name)).toContain(MODEL);
});

test("chat: a message and token counts", async () => {
  const reply = await ollama.chat({ model: MODEL, messages, options: { num_predict: 6, temperature: 0 } });
  expect(reply.message.role).toBe("assistant");
  expect(typeof reply.message.content).toBe("string");
  expect(reply.done).toBe(true);
  expect(reply.prompt_eval_count).toBeGreaterThan(0);
  expect(reply.eval_count).toBeLessThanOrEqual(6);
});

test("chat streamed: the parts make the whole reply, counts in the last one", async () => {
  let text = "";
  let last;
  for await (const part of await ollama.chat({ model: MODEL, messages, stream: true, options: { num_predict: 6, temperature: 0 } })) {
    text += part.message.content;
    last = part;
  }
  const whole = await ollama.chat({ model: MODEL, messages, options: { num_predict: 6, temperature: 0 } });
  expect(text).toBe(whole.message.content);
  expect(last!.done).toBe(true);
  expect(last!.eval_count).toBe(whole.eval_count);
});

test("generate streamed with a system prompt", async () => {
  let text = "";
  for await (const part of await ollama.generate({ model: MODEL, prompt: "Once upon a time", system: "Be brief.", stream: true, options: { num_predict: 5 } })) {
    text += part.response;
    if (part.done) expect(part.eval_count).toBeLessThanOrEqual(5);
  }
  expect(typeof text).toBe("string");
});

test("tool_choice required: valid calls with object arguments", async () => {
  // The first call is at most 111 characters (a search with six \uXXXX escapes): 128 tokens end it however it is spelled.
  const reply = await ollama.chat({ model: MODEL, messages, tools, stream: false, tool_choice: "required", options: { num_predict: 128, temperature: 0 } } as ChatWithChoice);
  const calls = reply.message.tool_calls ?? [];
  expect(calls.length).toBeGreaterThanOrEqual(1);
  for (const call of calls) parseToolCall(call.function.name, call.function.arguments);
}, SLOW);

test("a named tool_choice: calls to that tool only", async () => {
  const reply = await ollama.chat({
    model: MODEL, messages, tools, stream: false, tool_choice: { type: "function", function: { name: "search" } }, options: { num_predict: 160 },
  } as ChatWithChoice);
  const calls = reply.message.tool_calls ?? [];
  expect(calls.length).toBeGreaterThanOrEqual(1);
  for (const call of calls) {
    expect(call.function.name).toBe("search");
    searchInput.parse(call.function.arguments);
  }
}, SLOW);

test("a tool round trip: the reply's call and a tool message with tool_name, then an answer", async () => {
  const first = await ollama.chat({ model: MODEL, messages, tools, stream: false, tool_choice: "required", options: { num_predict: 160 } } as ChatWithChoice);
  const calls = first.message.tool_calls!;
  const history: Message[] = [
    ...messages, first.message,
    ...calls.map((call) => ({ role: "tool", tool_name: call.function.name, content: JSON.stringify({ forecast: "sunny" }) })),
  ];
  const answer = await ollama.chat({ model: MODEL, messages: history, tools, options: { num_predict: 8 } });
  expect(answer.done).toBe(true);
  const questionOnly = await ollama.chat({ model: MODEL, messages, tools, options: { num_predict: 1 } });
  expect(answer.prompt_eval_count).toBeGreaterThan(questionOnly.prompt_eval_count + 10);
}, SLOW);

test("format from a zod schema: JSON of that schema", async () => {
  const reply = await ollama.chat({ model: MODEL, messages: [{ role: "user", content: "Plan a trip" }], format: z.toJSONSchema(forecastSchema), options: { num_predict: 150 } });
  const parsed = forecastSchema.parse(JSON.parse(reply.message.content));
  expect(parsed.days).toBeGreaterThanOrEqual(1);
}, SLOW);

test("format with integer .positive() (exclusiveMinimum), on generate", async () => {
  const reply = await ollama.generate({ model: MODEL, prompt: "Count", format: z.toJSONSchema(positiveSchema), options: { num_predict: 100 } });
  expect(positiveSchema.parse(JSON.parse(reply.response ?? "")).count).toBeGreaterThan(0);
}, SLOW);

test("format with z.record (propertyNames) and a number .positive()", async () => {
  const reply = await ollama.chat({ model: MODEL, messages: [{ role: "user", content: "Score it" }], format: z.toJSONSchema(recordSchema), options: { num_predict: 150 } });
  recordSchema.parse(JSON.parse(reply.message.content));
}, SLOW);

test("images as bytes (the client sends base64): their tokens count in the prompt", async () => {
  const ask = (images: Uint8Array[]) => ollama.chat({ model: MODEL, messages: [{ role: "user", content: "What is in the picture?", images }], options: { num_predict: 3 } });
  const [plain, pictured] = [await ask([]), await ask([jpeg])];
  const added = pictured.prompt_eval_count - plain.prompt_eval_count;
  expect(added).toBeGreaterThanOrEqual(IMAGE_TOKENS);
  expect(added).toBeLessThanOrEqual(IMAGE_TOKENS + 8);
  const generated = await ollama.generate({ model: MODEL, prompt: "Describe", images: [jpeg], options: { num_predict: 3 } });
  expect(generated.prompt_eval_count).toBeGreaterThan(IMAGE_TOKENS);
});
