// LM Studio's /api/v1/chat and the SDK's `predict` channel as pure translation, with no model, engine,
// server or socket: a body (or a prediction config and history) becomes the chat spec, and hand-made chat
// events become LM Studio's streamed events and result, or the channel's packets and stats, exactly.
import { describe, expect, test } from "bun:test";
import type { ChatMessage } from "../../../src/chat/types.ts";
import { EngineError } from "../../../src/engine/types.ts";
import type { ChatEvent, PromptProgress } from "../../../src/generation/chat-events.ts";
import { ApiError } from "../../../src/server/api-error.ts";
import { ChatThreads } from "../../../src/server/lmstudio/chat-threads.ts";
import { collapse, predictionConfig } from "../../../src/server/lmstudio/sdk/config-stack.ts";
import { toChatMessages } from "../../../src/server/lmstudio/sdk/history.ts";
import {
  effectiveConfig, predictionStats, predictPrompt, predictSpec, sendFragments, withSystemPrompt,
} from "../../../src/server/lmstudio/sdk/prediction.ts";
import { chatSchema, conversation, userMessage, v1ChatSpec } from "../../../src/server/lmstudio/v1-chat.ts";
import { readReply, replyResult } from "../../../src/server/lmstudio/v1-chat-reply.ts";
import type { ServedModel } from "../../../src/server/model-service.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { validate } from "../../../src/server/validation.ts";
import { choiceOf, content, done, pathModel, reasoning, storeModel, toolCallEvents, usage } from "../translation-fixture.ts";

const profile = profiles.c;
const parse = (body: Record<string, unknown>) => validate(chatSchema, { model: "tiny", input: "Hi", ...body });
const hi: ChatMessage[] = [{ role: "user", content: "Hi" }];

describe("v1ChatSpec", () => {
  test("the conversation, reasoning split by default, LM Studio's defaults, a reply that must fit the context", () => {
    expect(v1ChatSpec(profile, pathModel, parse({}), hi)).toEqual({
      prompt: { kind: "conversation", messages: hi },
      output: { reasoning: true },
      options: { temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1 },
      limit: { overflow: "refuse" },
    });
  });

  test("reasoning switches the template's thinking and the split", () => {
    expect(v1ChatSpec(profile, pathModel, parse({ reasoning: "off" }), hi)).toMatchObject({ prompt: { templateVariables: { enable_thinking: false } }, output: { reasoning: false } });
    expect(v1ChatSpec(profile, pathModel, parse({ reasoning: "high" }), hi)).toMatchObject({ prompt: { templateVariables: { enable_thinking: true } }, output: { reasoning: true } });
  });

  test("options: the profile's defaults < the model's parameters < the body's fields", () => {
    const model: ServedModel = storeModel({ parameters: { temperature: 0.3, top_k: 5, num_ctx: 1024 } });
    const spec = v1ChatSpec(profile, model, parse({ temperature: 0.8, max_output_tokens: 30, context_length: 2048, repeat_penalty: 1.1 }), hi);
    expect(spec.prompt).toEqual({ kind: "conversation", messages: hi, layers: model.stored! });
    expect(spec.options).toEqual({ temperature: 0.8, topP: 1, topK: 5, minP: 0, repeatPenalty: 1.1, maxTokens: 30, contextLength: 2048 });
  });
});

describe("conversation and userMessage", () => {
  test("text and image items make the user's message", async () => {
    const input = parse({ input: [{ type: "text", content: "What" }, { type: "image", data_url: "data:image/png;base64,AA==" }, { type: "message", content: "is it?" }] }).input;
    expect(await userMessage(input, async () => new Uint8Array([4]))).toEqual({ role: "user", content: "What\nis it?", images: [new Uint8Array([4])] });
  });

  test("a stored conversation continues; a new system prompt replaces its own; another key's id is unknown", () => {
    const threads = new ChatThreads();
    const id = threads.save("key-a", [{ role: "system", content: "Old." }, { role: "user", content: "1" }, { role: "assistant", content: "one" }]);
    const user: ChatMessage = { role: "user", content: "2" };
    expect(conversation(parse({ previous_response_id: id }), threads, "key-a", user)).toEqual([
      { role: "system", content: "Old." }, { role: "user", content: "1" }, { role: "assistant", content: "one" }, user,
    ]);
    expect(conversation(parse({ previous_response_id: id, system_prompt: "New." }), threads, "key-a", user)).toEqual([
      { role: "system", content: "New." }, { role: "user", content: "1" }, { role: "assistant", content: "one" }, user,
    ]);
    expect(() => conversation(parse({ previous_response_id: id }), threads, "key-b", user)).toThrow(`No stored response "${id}"`);
  });
});

describe("readReply and replyResult", () => {
  async function read(events: Array<ChatEvent | PromptProgress | { type: "round"; round: number }>) {
    const emitted: Array<[string, Record<string, unknown>]> = [];
    // as the tool loop gives them: rounds, progress and the chat's events
    const reply = await readReply({ events: async function* () { yield* events; } }, async (event, data) => void emitted.push([event, data]));
    return { reply, emitted };
  }

  test("reasoning then message, each opened, filled and closed; tool-call events are not LM Studio's", async () => {
    const { reply, emitted } = await read([reasoning("Hm"), reasoning("m."), content(""), content("Hi"), ...toolCallEvents(0, "c1", "f", {}), content("!"), done("stop")]);
    expect(emitted).toEqual([
      ["prompt_processing.start", {}], ["prompt_processing.progress", { progress: 1 }], ["prompt_processing.end", {}],
      ["reasoning.start", {}], ["reasoning.delta", { content: "Hm" }], ["reasoning.delta", { content: "m." }], ["reasoning.end", {}],
      ["message.start", {}], ["message.delta", { content: "Hi" }], ["message.delta", { content: "!" }], ["message.end", {}],
    ]);
    expect(reply).toEqual({ reasoning: "Hmm.", content: "Hi!", usage: usage() });
  });

  test("prompt progress: fractions of the tokens to process, rising, up to 1, before the reply's parts (the tool loop's round first)", async () => {
    const progress = (processed: number) => ({ type: "prompt_progress" as const, processed, total: 300, cached: 100, ms: 5 });
    const { emitted } = await read([{ type: "round", round: 0 }, progress(150), progress(150), progress(250), content("Hi"), done("stop")]);
    expect(emitted.slice(0, 5)).toEqual([
      ["prompt_processing.start", {}], ["prompt_processing.progress", { progress: 0.25 }], ["prompt_processing.progress", { progress: 0.75 }],
      ["prompt_processing.progress", { progress: 1 }], ["prompt_processing.end", {}],
    ]);
  });

  test("an error ends the open part and keeps what came before, with the error in API terms", async () => {
    const { reply, emitted } = await read([content("Hi"), { type: "error", code: "busy", message: "queue full" }]);
    expect(emitted.map(([event]) => event)).toEqual([
      "prompt_processing.start", "prompt_processing.progress", "prompt_processing.end", "message.start", "message.delta", "message.end",
    ]);
    expect(reply.content).toBe("Hi");
    expect(reply.error).toBeInstanceOf(ApiError);
    expect([reply.error!.status, reply.error!.message]).toEqual([503, "queue full"]);
  });

  test("the result: output items, stats from the usage, the load time and the stored conversation's id", () => {
    const reply = { reasoning: "Hmm.", content: "Hi!", usage: usage({ promptTokens: 12, completionTokens: 8, decodeMs: 400, timeToFirstTokenMs: 250 }) };
    expect(replyResult(reply, { instanceId: "tiny:2", reasoningTokens: 20, loadSeconds: 1.5, responseId: "resp_1" })).toEqual({
      model_instance_id: "tiny:2",
      output: [{ type: "reasoning", content: "Hmm." }, { type: "message", content: "Hi!" }],
      stats: {
        input_tokens: 12, total_output_tokens: 8, reasoning_output_tokens: 8, tokens_per_second: 20, time_to_first_token_seconds: 0.25, model_load_time_seconds: 1.5,
      },
      response_id: "resp_1",
    });
    expect(replyResult({ reasoning: "", content: "", usage: usage({ decodeMs: 0 }) }, { instanceId: "tiny", reasoningTokens: 0 })).toEqual({
      model_instance_id: "tiny",
      output: [{ type: "message", content: "" }],
      stats: { input_tokens: 7, total_output_tokens: 3, reasoning_output_tokens: 0, tokens_per_second: 0, time_to_first_token_seconds: 0.05 },
    });
  });
});

const layer = (fields: Record<string, unknown>) => ({ layers: [{ layerName: "apiOverride", config: { fields: Object.entries(fields).map(([key, value]) => ({ key, value })) } }] });
const configOf = (fields: Record<string, unknown>) => predictionConfig(collapse(layer(fields)));
const history = toChatMessages({ messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }, { role: "assistant", content: [{ type: "text", text: "Yo" }] }] });
const weather = { type: "function" as const, function: { name: "weather", parameters: { type: "object" } } };

describe("predictSpec", () => {
  test("the conversation for the model's template, the config's options over the model's over the profile's defaults", () => {
    const config = configOf({ "llm.prediction.temperature": 0.4, "llm.prediction.maxPredictedTokens": { checked: true, value: 16 } });
    const model = storeModel({ parameters: { top_k: 9, temperature: 0.9 } });
    expect(predictSpec(profile, model, config, predictPrompt(config, history))).toEqual({
      prompt: { kind: "conversation", messages: history },
      output: { tools: [], reasoning: true },
      options: { temperature: 0.4, topP: 1, topK: 9, minP: 0, repeatPenalty: 1, maxTokens: 16 },
      limit: { overflow: "refuse" },
      promptProgress: true,
    });
  });

  test("tools, forced calls, structured output and reasoning parsing from the config", () => {
    const config = configOf({
      "llm.prediction.tools": { type: "toolArray", tools: [weather], force: true },
      "llm.prediction.reasoning.parsing": { enabled: false },
    });
    expect(predictSpec(profile, pathModel, config, predictPrompt(config, history)).output).toEqual({ tools: [weather], reasoning: false, toolChoice: "required" });
    const json = configOf({ "llm.prediction.structured": { type: "json", jsonSchema: { type: "object" } } });
    expect(predictSpec(profile, pathModel, json, predictPrompt(json, history)).output).toEqual({ tools: [], reasoning: true, constraint: { type: "json_schema", schema: { type: "object" } } });
  });

  test("the config's system prompt goes first unless the history has one", () => {
    const config = configOf({ "llm.prediction.systemPrompt": "Be brief." });
    expect(withSystemPrompt(history, config)).toEqual([{ role: "system", content: "Be brief." }, ...history]);
    const own: ChatMessage[] = [{ role: "system", content: "Mine." }, ...history];
    expect(withSystemPrompt(own, config)).toBe(own);
  });

  test("client prompt templates: .complete()'s join and manual templates make raw text; Jinja code and tools with them are refused", () => {
    const join = configOf({ "llm.prediction.promptTemplate": { type: "jinja", jinjaPromptTemplate: { template: "{% for message in messages %}{{ message['content'] }}{% endfor %}" } } });
    expect(predictPrompt(join, history)).toEqual({ kind: "text", text: "HiYo" });
    const manual = configOf({ "llm.prediction.promptTemplate": { type: "manual", manualPromptTemplate: {
      beforeSystem: "S:", afterSystem: "\n", beforeUser: "U:", afterUser: "\n", beforeAssistant: "A:", afterAssistant: "\n",
    } } });
    expect(predictPrompt(manual, history)).toEqual({ kind: "text", text: "U:Hi\nA:Yo\nA:" });
    const jinja = configOf({ "llm.prediction.promptTemplate": { type: "jinja", jinjaPromptTemplate: { template: "{{ messages }}" } } });
    expect(() => predictPrompt(jinja, history)).toThrow("Custom Jinja prompt templates are not supported");
    const toolsAndJoin = configOf({ "llm.prediction.tools": { type: "toolArray", tools: [weather] }, "llm.prediction.promptTemplate": join.promptTemplate });
    expect(() => predictPrompt(toolsAndJoin, history)).toThrow("Tools cannot be used with a raw completion prompt template");
  });
});

describe("predict packets", () => {
  async function packetsOf(events: ChatEvent[]) {
    const sent: Array<Record<string, unknown>> = [];
    const finished = await sendFragments(choiceOf(events).events(), (packet) => void sent.push(packet));
    return { sent, finished };
  }
  const fragment = (text: string, reasoningType: "none" | "reasoning") =>
    ({ type: "fragment", fragment: { content: text, tokensCount: 1, containsDrafted: false, reasoningType, isStructural: false } });

  test("fragments for reasoning and text, and a tool call's start, name, argument fragments and end", async () => {
    const last = done("tool_calls");
    const { sent, finished } = await packetsOf([reasoning("Hm"), content(""), content("Sure"), ...toolCallEvents(0, "call_1", "weather", { city: "Oslo" }), last]);
    expect(sent).toEqual([
      fragment("Hm", "reasoning"),
      fragment("Sure", "none"),
      { type: "toolCallGenerationStart", toolCallId: "call_1" },
      { type: "toolCallGenerationNameReceived", name: "weather" },
      { type: "toolCallGenerationArgumentFragmentGenerated", content: '{"city":' },
      { type: "toolCallGenerationArgumentFragmentGenerated", content: '"Oslo"}' },
      { type: "toolCallGenerationEnd", toolCallRequest: { id: "call_1", type: "function", name: "weather", arguments: { city: "Oslo" } } },
    ]);
    expect(finished).toEqual(last);
  });

  test("a call that comes whole still starts before it ends; an engine error is thrown", async () => {
    const { sent } = await packetsOf([{ type: "tool_call", index: 0, call: { id: "call_2", name: "f", arguments: {} } }, done("tool_calls")]);
    expect(sent.map((p) => p.type)).toEqual(["toolCallGenerationStart", "toolCallGenerationEnd"]);
    const error = await packetsOf([content("a"), { type: "error", code: "engine_exited", message: "gone" }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).message).toBe("gone");
  });

  test("success stats and the effective prediction config", () => {
    const finished = { type: "done" as const, finishReason: "length" as const, usage: usage({ completionTokens: 16, decodeMs: 800, timeToFirstTokenMs: 100 }) };
    expect(predictionStats(finished, 16, 0, 1.25)).toEqual({
      stopReason: "maxPredictedTokensReached", tokensPerSecond: 20, numGpuLayers: 0, timeToFirstTokenSec: 0.1, totalTimeSec: 1.25,
      promptTokensCount: 7, predictedTokensCount: 16, totalTokensCount: 23,
    });
    expect(predictionStats({ ...finished, usage: usage({ completionTokens: 5 }) }, 16, 0, 1).stopReason).toBe("contextLengthReached");
    expect(effectiveConfig({ temperature: 0.4, topK: 9, seed: 3 }, undefined)).toEqual({ fields: [
      { key: "llm.prediction.temperature", value: 0.4 },
      { key: "llm.prediction.topKSampling", value: 9 },
      { key: "llm.prediction.seed", value: { checked: true, value: 3 } },
      { key: "llm.prediction.stopStrings", value: [] },
      { key: "llm.prediction.maxPredictedTokens", value: { checked: false, value: 1 } },
    ] });
    expect(effectiveConfig({ maxTokens: 99, stop: ["x"] }, 16).fields).toEqual([
      { key: "llm.prediction.stopStrings", value: ["x"] },
      { key: "llm.prediction.maxPredictedTokens", value: { checked: true, value: 16 } },
    ]);
  });
});
