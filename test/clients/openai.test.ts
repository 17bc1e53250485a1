// The official `openai` client (pinned) pointed at profiles b (vLLM) and c (LM Studio): text, streaming
// with usage, tools with required and named choice, a tool round trip (by hand and through runTools),
// structured output from zod schemas through `chat.completions.parse()` with `zodResponseFormat` and the
// `.stream()` helper, and images. One server per profile.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { zodFunction, zodResponseFormat } from "openai/helpers/zod";
import {
  type ClientServer, IMAGE_TOKENS, MODEL, forecastSchema, jpegDataUri, openAiTools, parseToolCall, positiveNumberSchema, positiveSchema, question, searchInput,
  startClientServer, weatherInput,
} from "./client-fixture.ts";

const servers: Partial<Record<"b" | "c", ClientServer>> = {};

beforeAll(async () => {
  for (const profile of ["b", "c"] as const) servers[profile] = await startClientServer(profile);
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
});

/** Grammar-constrained replies run at a few tokens a second on a busy 2-core machine. */
const SLOW = 300_000;
const messages = [{ role: "user" as const, content: question }];
/**
 * Room for one forced call: its text is at most about 100 characters (the schemas bound every value), and
 * under a grammar a random-weight model may spell it a character per token (60 was once too few in CI).
 */
const CALL_TOKENS = 160;

describe.each(["b", "c"] as const)("profile %s", (profile) => {
  const client = () => new OpenAI({ baseURL: `${servers[profile]!.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });

  test("chat.completions.create: text, finish reason and usage", async () => {
    const completion = await client().chat.completions.create({ model: MODEL, messages, max_tokens: 6, temperature: 0 });
    expect(completion.model).toBe(MODEL);
    expect(typeof completion.choices[0]!.message.content).toBe("string");
    expect(["length", "stop"]).toContain(completion.choices[0]!.finish_reason);
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(6);
  });

  test("streamed with include_usage: the deltas make the text, usage comes last", async () => {
    const stream = await client().chat.completions.create({ model: MODEL, messages, max_tokens: 6, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage ?? usage;
    }
    const whole = await client().chat.completions.create({ model: MODEL, messages, max_tokens: 6, temperature: 0 });
    expect(text).toBe(whole.choices[0]!.message.content!);
    expect(usage!.completion_tokens).toBe(whole.usage!.completion_tokens);
  });

  test("tool_choice required: one valid call", async () => {
    const completion = await client().chat.completions.create({ model: MODEL, messages, tools: openAiTools, tool_choice: "required", parallel_tool_calls: false, max_tokens: CALL_TOKENS });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error(`not a function call: ${call.type}`);
    parseToolCall(call.function.name, JSON.parse(call.function.arguments));
  }, SLOW);

  test("a named tool through .parse() with zodFunction: parsed_arguments of that tool", async () => {
    const completion = await client().chat.completions.parse({
      model: MODEL, messages, max_tokens: CALL_TOKENS, parallel_tool_calls: false,
      tools: [zodFunction({ name: "get_weather", parameters: weatherInput }), zodFunction({ name: "search", parameters: searchInput })],
      tool_choice: { type: "function", function: { name: "search" } },
    });
    const call = completion.choices[0]!.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error(`not a function call: ${JSON.stringify(call)}`);
    expect(call.function.name).toBe("search");
    expect(searchInput.parse(call.function.parsed_arguments)).toEqual(call.function.parsed_arguments as { query: string });
  }, SLOW);

  test("a tool round trip by hand: call, result, answer", async () => {
    const first = await client().chat.completions.create({ model: MODEL, messages, tools: openAiTools, tool_choice: "required", parallel_tool_calls: false, max_tokens: CALL_TOKENS });
    const assistant = first.choices[0]!.message;
    const history: OpenAI.ChatCompletionMessageParam[] = [
      ...messages, assistant,
      ...assistant.tool_calls!.map((call) => ({ role: "tool" as const, tool_call_id: call.id, content: JSON.stringify({ forecast: "sunny" }) })),
    ];
    const answer = await client().chat.completions.create({ model: MODEL, messages: history, tools: openAiTools, tool_choice: "none", max_tokens: 8 });
    expect(answer.choices[0]!.message.tool_calls ?? []).toEqual([]);
    const questionOnly = await client().chat.completions.create({ model: MODEL, messages, tools: openAiTools, tool_choice: "none", max_tokens: 1 });
    expect(answer.usage!.prompt_tokens).toBeGreaterThan(questionOnly.usage!.prompt_tokens + 10);
  }, SLOW);

  test("runTools runs the zod tool the model calls and sends its result back", async () => {
    const executed: unknown[] = [];
    const runner = client().chat.completions.runTools({
      model: MODEL, messages, max_tokens: CALL_TOKENS, tool_choice: "required", parallel_tool_calls: false,
      tools: [zodFunction({ name: "get_weather", parameters: weatherInput, function: (args) => (executed.push(args), { forecast: "sunny" }) })],
    }, { maxChatCompletions: 2 });
    await runner.done();
    const sent = runner.messages;
    expect(executed.length).toBeGreaterThanOrEqual(1);
    for (const args of executed) weatherInput.parse(args);
    expect(sent.filter((m) => m.role === "tool").length).toBeGreaterThanOrEqual(1);
  }, SLOW);

  test("chat.completions.parse() with zodResponseFormat: a parsed object of the schema", async () => {
    const completion = await client().chat.completions.parse({ model: MODEL, messages: [{ role: "user", content: "Plan a trip" }], response_format: zodResponseFormat(forecastSchema, "forecast"), max_tokens: 150 });
    const parsed = completion.choices[0]!.message.parsed;
    expect(forecastSchema.parse(parsed)).toEqual(parsed!);
  }, SLOW);

  test("parse() with an integer .positive() field (exclusiveMinimum)", async () => {
    const completion = await client().chat.completions.parse({ model: MODEL, messages: [{ role: "user", content: "Count" }], response_format: zodResponseFormat(positiveSchema, "count"), max_tokens: 100 });
    const parsed = completion.choices[0]!.message.parsed!;
    expect(parsed.count).toBeGreaterThan(0);
    expect(positiveSchema.parse(parsed)).toEqual(parsed);
  }, SLOW);

  test("parse() with a number .positive() field (exclusiveMinimum on a number)", async () => {
    const completion = await client().chat.completions.parse({ model: MODEL, messages: [{ role: "user", content: "Weigh it" }], response_format: zodResponseFormat(positiveNumberSchema, "weight"), max_tokens: 60 });
    const parsed = completion.choices[0]!.message.parsed!;
    expect(parsed.weight).toBeGreaterThan(0);
    expect(positiveNumberSchema.parse(parsed)).toEqual(parsed);
  }, SLOW);

  test("the .stream() helper: content deltas, then a parsed final completion with usage", async () => {
    const stream = client().chat.completions.stream({
      model: MODEL, messages: [{ role: "user", content: "Plan a trip" }], response_format: zodResponseFormat(forecastSchema, "forecast"), max_tokens: 150,
      stream_options: { include_usage: true },
    });
    let deltas = "";
    stream.on("content.delta", ({ delta }) => (deltas += delta));
    const final = await stream.finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(deltas).toBe(message.content!);
    expect(forecastSchema.parse(message.parsed)).toEqual(message.parsed!);
    expect(final.usage!.completion_tokens).toBeGreaterThan(0);
  }, SLOW);

  test("an image_url data URI reaches the model: its tokens count in the prompt", async () => {
    const ask = (withImage: boolean) => client().chat.completions.create({
      model: MODEL, max_tokens: 3, temperature: 0,
      messages: [{ role: "user", content: [{ type: "text", text: "What is in the picture?" }, ...(withImage ? [{ type: "image_url" as const, image_url: { url: jpegDataUri } }] : [])] }],
    });
    const [plain, pictured] = [await ask(false), await ask(true)];
    const added = pictured.usage!.prompt_tokens - plain.usage!.prompt_tokens;
    expect(added).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(added).toBeLessThanOrEqual(IMAGE_TOKENS + 8);
  });
});
