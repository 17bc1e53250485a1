// LangChain JS (pinned) pointed at llamux as its users point it at the anchors: `@langchain/openai`'s
// ChatOpenAI at profiles b (vLLM) and c (LM Studio), `@langchain/ollama`'s ChatOllama at profile a
// (Ollama). Text, streaming with usage, tools (required and named choice where the client can send a
// choice), a tool round trip, structured output from zod schemas, and images. One server per profile.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AIMessage, HumanMessage, ToolMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOllama } from "@langchain/ollama";
import { ChatOpenAI } from "@langchain/openai";
import {
  type ClientServer, IMAGE_TOKENS, MODEL, forecastSchema, jpegDataUri, parseToolCall, positiveSchema, question, recordSchema, searchInput,
  startClientServer, weatherInput, type ProfileName,
} from "./client-fixture.ts";

const servers: Partial<Record<ProfileName, ClientServer>> = {};

beforeAll(async () => {
  for (const profile of ["a", "b", "c"] as const) servers[profile] = await startClientServer(profile);
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
});

/** Grammar-constrained replies run at a few tokens a second on a busy 2-core machine. */
const SLOW = 300_000;

const openAiChat = (profile: "b" | "c", maxTokens: number) => new ChatOpenAI({
  model: MODEL, apiKey: "unused", configuration: { baseURL: `${servers[profile]!.baseUrl}/v1` }, maxTokens, temperature: 0, maxRetries: 0,
});
const ollamaChat = (numPredict: number) => new ChatOllama({ model: MODEL, baseUrl: servers.a!.baseUrl, numPredict, temperature: 0 });
const chatModel = (profile: ProfileName, maxTokens: number) => (profile === "a" ? ollamaChat(maxTokens) : openAiChat(profile, maxTokens));

const getWeather = tool(async () => "sunny", { name: "get_weather", description: "Weather forecast for a city", schema: weatherInput });
const search = tool(async () => "nothing", { name: "search", description: "Search the web", schema: searchInput });

/** What the reply's text is, whatever shape of content the client built. */
const textOf = (message: BaseMessage) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content));

describe.each(["a", "b", "c"] as const)("profile %s", (profile) => {
  test("invoke: an AI message with text and token usage", async () => {
    const reply = await chatModel(profile, 6).invoke(question);
    expect(typeof textOf(reply)).toBe("string");
    expect(reply.usage_metadata!.input_tokens).toBeGreaterThan(0);
    expect(reply.usage_metadata!.output_tokens).toBeGreaterThan(0);
    expect(reply.usage_metadata!.output_tokens).toBeLessThanOrEqual(6);
  });

  test("stream: the chunks add up to the reply, with usage", async () => {
    let whole: AIMessageChunk | undefined;
    for await (const chunk of await chatModel(profile, 6).stream(question)) whole = whole ? whole.concat(chunk) : chunk;
    const reply = await chatModel(profile, 6).invoke(question);
    expect(textOf(whole!)).toBe(textOf(reply));
    expect(whole!.usage_metadata!.input_tokens).toBe(reply.usage_metadata!.input_tokens);
    expect(whole!.usage_metadata!.output_tokens).toBeGreaterThan(0);
  });

  test("a tool round trip: a call and its result in the history, then an answer", async () => {
    const history = [
      new HumanMessage(question),
      new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "get_weather", args: { city: "Paris", days: 2 }, type: "tool_call" }] }),
      new ToolMessage({ tool_call_id: "call_1", name: "get_weather", content: JSON.stringify({ forecast: "sunny", celsius: 21 }) }),
    ];
    const model = chatModel(profile, 6).bindTools([getWeather, search]);
    const answer = await model.invoke(history);
    const without = await model.invoke([history[0]!]);
    expect(typeof textOf(answer)).toBe("string");
    // the call and its result reached the prompt
    expect(answer.usage_metadata!.input_tokens).toBeGreaterThan(without.usage_metadata!.input_tokens + 10);
  });

  test("structured output from a zod schema (withStructuredOutput, json schema)", async () => {
    const result = await chatModel(profile, 150).withStructuredOutput(forecastSchema, { name: "forecast", method: "jsonSchema" }).invoke("Plan a trip");
    expect(forecastSchema.parse(result)).toEqual(result);
  }, SLOW);

  test("structured output with integer .positive() (exclusiveMinimum)", async () => {
    const result = await chatModel(profile, 100).withStructuredOutput(positiveSchema, { name: "count", method: "jsonSchema" }).invoke("Count");
    expect(result.count).toBeGreaterThan(0);
    expect(positiveSchema.parse(result)).toEqual(result);
  }, SLOW);

  test("structured output with z.record (propertyNames) and a number .positive()", async () => {
    const result = await chatModel(profile, 150).withStructuredOutput(recordSchema, { name: "scores", method: "jsonSchema" }).invoke("Score it");
    expect(recordSchema.parse(result)).toEqual(result);
  }, SLOW);

  test("an image_url part reaches the model: its tokens count in the prompt", async () => {
    const ask = (withImage: boolean) => chatModel(profile, 3).invoke([new HumanMessage({
      content: [{ type: "text", text: "What is in the picture?" }, ...(withImage ? [{ type: "image_url", image_url: { url: jpegDataUri } }] : [])],
    })]);
    const [plain, pictured] = [await ask(false), await ask(true)];
    const added = pictured.usage_metadata!.input_tokens - plain.usage_metadata!.input_tokens;
    expect(added).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    // the image's tokens, and a few that set it apart from the text (profile a puts it in a message of its own)
    expect(added).toBeLessThanOrEqual(IMAGE_TOKENS + 8);
  });
});

// ChatOllama sends no tool_choice (Ollama has none), so forced calls are ChatOpenAI's alone.
describe.each(["b", "c"] as const)("profile %s, ChatOpenAI's tool choice", (profile) => {
  test("tool_choice required: a valid call", async () => {
    const reply = await openAiChat(profile, 160).bindTools([getWeather, search], { tool_choice: "required", parallel_tool_calls: false }).invoke(question);
    expect(reply.tool_calls).toHaveLength(1);
    const call = reply.tool_calls![0]!;
    parseToolCall(call.name, call.args);
    expect(call.id).toBeTruthy();
  }, SLOW);

  test("a named tool_choice, streamed: a valid call to that tool", async () => {
    const model = openAiChat(profile, 160).bindTools([getWeather, search], { tool_choice: "search", parallel_tool_calls: false });
    let whole: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(question)) whole = whole ? whole.concat(chunk) : chunk;
    expect(whole!.tool_calls).toHaveLength(1);
    expect(whole!.tool_calls![0]!.name).toBe("search");
    searchInput.parse(whole!.tool_calls![0]!.args);
  }, SLOW);

  test("the forced call's message goes back with its result, and the model answers", async () => {
    const model = openAiChat(profile, 160).bindTools([getWeather], { tool_choice: "required", parallel_tool_calls: false });
    const call = await model.invoke(question);
    const history = [new HumanMessage(question), call, ...call.tool_calls!.map((c) => new ToolMessage({ tool_call_id: c.id!, content: "sunny, 21 °C" }))];
    const answering = openAiChat(profile, 8).bindTools([getWeather], { tool_choice: "none" });
    const answer = await answering.invoke(history);
    expect(answer.tool_calls ?? []).toEqual([]);
    // the call and its result reached the prompt ("none" leaves the tools out of both)
    const questionOnly = await answering.invoke([history[0]!]);
    expect(answer.usage_metadata!.input_tokens).toBeGreaterThan(questionOnly.usage_metadata!.input_tokens + 10);
  }, SLOW);
});
