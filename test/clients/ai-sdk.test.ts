// The Vercel AI SDK (`ai`, pinned) pointed at llamux as its users point it at the anchors:
// `@ai-sdk/openai-compatible` at profiles b (vLLM) and c (LM Studio), `ollama-ai-provider-v2` at
// profile a (Ollama). Text, streaming with usage, tools with required and named choice, a tool round
// trip through the SDK's own loop, structured output from zod schemas, and images. One server per profile.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, type LanguageModel, Output, stepCountIs, streamText, tool } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import {
  type ClientServer, IMAGE_TOKENS, MODEL, forecastSchema, jpeg, parseToolCall, positiveSchema, question, recordSchema, searchInput,
  startClientServer, weatherInput, type ProfileName,
} from "./client-fixture.ts";

const servers: Partial<Record<ProfileName, ClientServer>> = {};

beforeAll(async () => {
  for (const profile of ["a", "b", "c"] as const) servers[profile] = await startClientServer(profile);
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
});

/**
 * The provider each anchor's users pick, and how they bound a reply with it. The Ollama provider sends
 * maxOutputTokens as a top-level field Ollama ignores, so its users set options.num_predict (llamux reads
 * the top-level field too: the last describe block tests it); on the
 * OpenAI-compatible provider one call per reply is asked for with parallel_tool_calls (a pass-through
 * provider option), as random weights would otherwise repeat calls until the token limit.
 */
function modelFor(profile: ProfileName): { model: LanguageModel; limit: (tokens: number) => Record<string, unknown> } {
  const baseUrl = servers[profile]!.baseUrl;
  if (profile === "a") {
    const ollama = createOllama({ baseURL: `${baseUrl}/api` });
    return { model: ollama(MODEL), limit: (tokens) => ({ providerOptions: { ollama: { options: { num_predict: tokens } } } }) };
  }
  const provider = createOpenAICompatible({ name: "llamux", baseURL: `${baseUrl}/v1`, apiKey: "unused", includeUsage: true, supportsStructuredOutputs: true });
  return { model: provider.chatModel(MODEL), limit: (tokens) => ({ maxOutputTokens: tokens, providerOptions: { llamux: { parallel_tool_calls: false } } }) };
}

/** Grammar-constrained replies run at a few tokens a second on a busy 2-core machine. */
const SLOW = 300_000;
/**
 * One forced call whatever pieces it is spelled in: the grammar admits at most 111 characters (a search with
 * six \uXXXX escapes) and the end token; about 40 tokens is typical. The Ollama provider cannot ask for one
 * call only: later calls may be cut off, the first always ends.
 */
const CALL_TOKENS = 128;

const tools = {
  get_weather: tool({ description: "Weather forecast for a city", inputSchema: weatherInput }),
  search: tool({ description: "Search the web", inputSchema: searchInput }),
};

describe.each(["a", "b", "c"] as const)("profile %s", (profile) => {
  test("generateText: text, a finish reason and token usage", async () => {
    const { model, limit } = modelFor(profile);
    const result = await generateText({ model, prompt: question, temperature: 0, maxRetries: 0, ...limit(6) });
    expect(typeof result.text).toBe("string");
    expect(["length", "stop"]).toContain(result.finishReason);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeLessThanOrEqual(6);
  });

  test("streamText: the streamed text is the whole text, with usage at the end", async () => {
    const { model, limit } = modelFor(profile);
    const result = streamText({ model, prompt: question, temperature: 0, maxRetries: 0, ...limit(6) });
    let streamed = "";
    for await (const delta of result.textStream) streamed += delta;
    expect(streamed).toBe(await result.text);
    const usage = await result.usage;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeLessThanOrEqual(6);
  });

  test("toolChoice required: a valid call to one of the tools", async () => {
    const { model, limit } = modelFor(profile);
    const result = await generateText({ model, prompt: question, tools, toolChoice: "required", temperature: 0, maxRetries: 0, ...limit(CALL_TOKENS) });
    expect(result.toolCalls.length).toBeGreaterThanOrEqual(1);
    for (const call of result.toolCalls) parseToolCall(call.toolName, call.input);
    if (profile !== "a") expect(result.finishReason).toBe("tool-calls");
  }, SLOW);

  test("a named toolChoice: a valid call to that tool, streamed", async () => {
    const { model, limit } = modelFor(profile);
    const result = streamText({ model, prompt: question, tools, toolChoice: { type: "tool", toolName: "search" }, temperature: 0, maxRetries: 0, ...limit(CALL_TOKENS) });
    const calls = await result.toolCalls;
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      expect(call.toolName).toBe("search");
      // maxLength counts code points (JSON Schema and zod alike): an emoji is one character, two UTF-16 units
      expect([...searchInput.parse(call.input).query].length).toBeLessThanOrEqual(6);
    }
  }, SLOW);

  test("a tool round trip through the SDK's loop: call, result, answer", async () => {
    const { model, limit } = modelFor(profile);
    const executed: unknown[] = [];
    const result = await generateText({
      model, prompt: question, temperature: 0, maxRetries: 0, ...limit(CALL_TOKENS),
      tools: {
        get_weather: tool({
          description: "Weather forecast for a city", inputSchema: weatherInput,
          execute: async (input) => {
            executed.push(input);
            return { forecast: "sunny", celsius: 21 };
          },
        }),
      },
      // force the call first, then let the model answer from the tool's result
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? "required" : "none" }),
      stopWhen: stepCountIs(2),
    });
    expect(result.steps).toHaveLength(2);
    expect(executed).toHaveLength(result.steps[0]!.toolCalls.length);
    expect(executed.length).toBeGreaterThanOrEqual(1);
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({ forecast: "sunny", celsius: 21 });
    // the second request carried the call and its result back: a longer prompt than the question alone
    const questionOnly = await generateText({ model, prompt: question, tools: { get_weather: tools.get_weather }, toolChoice: "none", maxRetries: 0, ...limit(1) });
    expect(result.steps[1]!.usage.inputTokens!).toBeGreaterThan(questionOnly.usage.inputTokens! + 10);
    expect(result.steps[1]!.toolCalls).toEqual([]);
    expect(["length", "stop"]).toContain(result.steps[1]!.finishReason);
  }, SLOW);

  test("structured output from a zod schema (Output.object)", async () => {
    const { model, limit } = modelFor(profile);
    const result = await generateText({ model, prompt: "Plan a trip", output: Output.object({ schema: forecastSchema }), temperature: 0, maxRetries: 0, ...limit(150) });
    expect(forecastSchema.parse(result.output)).toEqual(result.output);
  }, SLOW);

  test("structured output with integer .positive() (exclusiveMinimum) through generateObject", async () => {
    const { model, limit } = modelFor(profile);
    const result = await generateObject({ model, prompt: "Count", schema: positiveSchema, temperature: 0, maxRetries: 0, ...limit(120) });
    expect(result.object.count).toBeGreaterThan(0);
    expect(positiveSchema.parse(result.object)).toEqual(result.object);
  }, SLOW);

  test("structured output with z.record (propertyNames) and a number .positive()", async () => {
    const { model, limit } = modelFor(profile);
    const result = await generateText({ model, prompt: "Score it", output: Output.object({ schema: recordSchema }), temperature: 0, maxRetries: 0, ...limit(150) });
    expect(recordSchema.parse(result.output)).toEqual(result.output);
    expect(Object.keys(result.output.scores).length).toBeLessThanOrEqual(2);
  }, SLOW);

  test("an image file part reaches the model: its tokens count in the prompt", async () => {
    const { model, limit } = modelFor(profile);
    // ollama-ai-provider-v2 4.0.1 under ai 7 throws on Uint8Array file data before sending anything
    // (convertBase64ToUint8Array of undefined); base64 text is what works with it.
    const data = profile === "a" ? Buffer.from(jpeg).toString("base64") : jpeg;
    const ask = (withImage: boolean) => generateText({
      model, temperature: 0, maxRetries: 0, ...limit(3),
      messages: [{ role: "user", content: [{ type: "text", text: "What is in the picture?" }, ...(withImage ? [{ type: "file" as const, data, mediaType: "image/jpeg" }] : [])] }],
    });
    const [plain, pictured] = [await ask(false), await ask(true)];
    expect(pictured.usage.inputTokens! - plain.usage.inputTokens!).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(pictured.usage.inputTokens! - plain.usage.inputTokens!).toBeLessThanOrEqual(IMAGE_TOKENS + 8);
  });
});

describe("the Ollama provider's top-level limit and sampling fields (profile a)", () => {
  // ollama-ai-provider-v2 sends maxOutputTokens, temperature and topP as top-level fields of /api/chat
  // (max_output_tokens, temperature, top_p) and of /api/generate for its completion model (max_tokens,
  // temperature, top_p). Ollama ignores them; llamux reads them under `options`, which win.
  const ollama = () => createOllama({ baseURL: `${servers.a!.baseUrl}/api` });
  const LIMIT = 8;

  test("generateText with maxOutputTokens: the reply stops at that many tokens", async () => {
    const result = await generateText({ model: ollama()(MODEL), prompt: question, maxOutputTokens: LIMIT, maxRetries: 0 });
    expect(result.finishReason).toBe("length");
    expect(result.usage.outputTokens).toBe(LIMIT);
  });

  test("streamText with maxOutputTokens: the streamed reply stops at that many tokens", async () => {
    const result = streamText({ model: ollama()(MODEL), prompt: question, maxOutputTokens: LIMIT, maxRetries: 0 });
    for await (const _ of result.textStream);
    expect(await result.finishReason).toBe("length");
    expect((await result.usage).outputTokens).toBe(LIMIT);
  });

  test("options.num_predict wins over maxOutputTokens", async () => {
    const result = await generateText({
      model: ollama()(MODEL), prompt: question, maxOutputTokens: LIMIT, maxRetries: 0, providerOptions: { ollama: { options: { num_predict: 3 } } },
    });
    expect(result.finishReason).toBe("length");
    expect(result.usage.outputTokens).toBe(3);
  });

  test("temperature and topP reach the sampler", async () => {
    const reply = async (settings: { temperature?: number; topP?: number }) =>
      (await generateText({ model: ollama()(MODEL), prompt: question, maxOutputTokens: LIMIT, maxRetries: 0, ...settings })).text;
    // Ollama's default temperature (0.8) with a random seed: replies differ from call to call unless
    // temperature 0 makes them greedy, or a tiny top_p leaves only the likeliest token.
    const greedy = await reply({ temperature: 0 });
    expect(await reply({ temperature: 0 })).toBe(greedy);
    expect(await reply({ temperature: 1, topP: 1e-6 })).toBe(greedy);
    expect(await reply({ temperature: 1 })).not.toBe(greedy);
  });

  test("the completion model (/api/generate) with maxOutputTokens: the reply stops at that many tokens", async () => {
    const model = ollama().completion(MODEL);
    const result = await generateText({ model, prompt: question, maxOutputTokens: LIMIT, maxRetries: 0 });
    expect(result.usage.outputTokens).toBe(LIMIT);
    const greedy = (await generateText({ model, prompt: question, maxOutputTokens: LIMIT, temperature: 0, maxRetries: 0 })).text;
    expect((await generateText({ model, prompt: question, maxOutputTokens: LIMIT, temperature: 1, topP: 1e-6, maxRetries: 0 })).text).toBe(greedy);
  });
});
