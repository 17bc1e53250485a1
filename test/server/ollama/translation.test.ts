// Ollama's /api/chat and /api/generate as pure translation, with no model, engine or server: a body
// (validated by the route's schema) becomes the chat spec, with the model's capabilities given as data,
// and hand-made chat events become the NDJSON chunks and the final object, exactly (clock fields checked
// and set aside).
import { describe, expect, test } from "bun:test";
import type { ChatEvent } from "../../../src/generation/chat-events.ts";
import type { ChatResult } from "../../../src/generation/chat.ts";
import { ollamaDefaults } from "../../../src/options/values.ts";
import { ApiError } from "../../../src/server/api-error.ts";
import type { ServedModel } from "../../../src/server/model-service.ts";
import { chatShape, ollamaChatSpec } from "../../../src/server/ollama/chat.ts";
import { toChatMessages } from "../../../src/server/ollama/chat-messages.ts";
import { generateShape, ollamaGenerateSpec } from "../../../src/server/ollama/generate.ts";
import { nativeOptions } from "../../../src/server/ollama/options.ts";
import { nativeReply, sendNativeChunks, type NativeShape } from "../../../src/server/ollama/respond.ts";
import { chatSchema, generateSchema } from "../../../src/server/ollama/schemas.ts";
import { validate } from "../../../src/server/validation.ts";
import type { Capability } from "../../../src/store/capabilities.ts";
import { choiceOf, collector, content, done, pathModel, reasoning, storeModel, toolCallEvents, usage } from "../translation-fixture.ts";

const CHAT_ONLY: Capability[] = ["completion"];
const EVERYTHING: Capability[] = ["completion", "tools", "insert", "thinking"];
const tool = { type: "function", function: { name: "weather", description: "Forecast", parameters: { type: "object", properties: { city: { type: "string" } } } } };

/** The spec /api/chat builds for this body, the model able to do `capabilities`. */
function chatSpecOf(body: Record<string, unknown>, capabilities = EVERYTHING, model: ServedModel = pathModel, toolCallParser?: "none") {
  const parsed = validate(chatSchema, { model: model.id, messages: [{ role: "user", content: "Hi" }], ...body });
  const messages = toChatMessages(parsed.messages ?? [], () => []);
  return ollamaChatSpec(model, parsed, messages, nativeOptions(model, parsed), { capabilities, toolCallParser });
}

function generateSpecOf(body: Record<string, unknown>, capabilities = EVERYTHING, model: ServedModel = pathModel, images: Uint8Array[] = []) {
  const parsed = validate(generateSchema, { model: model.id, prompt: "Why?", ...body });
  return ollamaGenerateSpec(model, parsed, images, nativeOptions(model, parsed), capabilities);
}

function refusal(build: () => unknown): ApiError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("not refused");
}

describe("nativeOptions", () => {
  test("Ollama's defaults < the model's parameters < top-level sampling fields < options", () => {
    const model = storeModel({ parameters: { temperature: 0.3, top_k: 7, num_ctx: 2048, stop: ["<end>"] } });
    expect(nativeOptions(model, {})).toEqual({ ...ollamaDefaults(), temperature: 0.3, topK: 7, contextLength: 2048, stop: ["<end>"] });
    const layered = nativeOptions(model, { temperature: 0.5, top_p: 0.6, max_output_tokens: 20, options: { top_p: 0.4, num_predict: 9, repeat_penalty: 1.3 } });
    expect([layered.temperature, layered.topP, layered.maxTokens, layered.repeatPenalty, layered.topK]).toEqual([0.5, 0.4, 9, 1.3, 7]);
    expect(() => nativeOptions(pathModel, { options: { temperature: "hot" } })).toThrow('option "temperature" must be of type float');
  });
});

describe("ollamaChatSpec", () => {
  test("a bare chat: the conversation under the model's layers, oldest messages dropped to fit, Ollama's defaults", () => {
    expect(chatSpecOf({}, CHAT_ONLY)).toEqual({
      prompt: { kind: "conversation", messages: [{ role: "user", content: "Hi" }], layers: {}, overflow: "drop-oldest" },
      output: { tools: [], reasoning: false },
      options: ollamaDefaults(),
      limit: { overflow: "allow" },
    });
    const model = storeModel({ template: "{{ .Prompt }}", system: "Be brief.", parameters: { temperature: 0.2 } });
    const spec = chatSpecOf({ truncate: false, options: { seed: 3 } }, CHAT_ONLY, model);
    expect(spec.prompt).toEqual({ kind: "conversation", messages: [{ role: "user", content: "Hi" }], layers: model.stored!, overflow: "refuse" });
    expect([spec.options.temperature, spec.options.seed]).toEqual([0.2, 3]);
  });

  test("think: the template's setting, reasoning split off for a thinking model unless turned off", () => {
    expect(chatSpecOf({}).output?.reasoning).toBe(true);
    expect(chatSpecOf({ think: false })).toMatchObject({ prompt: { think: false }, output: { reasoning: false } });
    expect(chatSpecOf({ think: "max" }).prompt).toMatchObject({ think: "high" });
    expect(refusal(() => chatSpecOf({ think: true }, CHAT_ONLY)).message).toBe('"tiny.gguf" does not support thinking');
  });

  test("tools, tool_choice (ignored where it cannot be honoured), format and logprobs", () => {
    const functionTool = { type: "function" as const, function: tool.function };
    expect(chatSpecOf({ tools: [tool], tool_choice: { type: "function", function: { name: "weather" } }, logprobs: true, top_logprobs: 3 })).toMatchObject({
      output: { tools: [functionTool], reasoning: true, toolChoice: { name: "weather" } }, logprobs: 3,
    });
    expect(chatSpecOf({ tools: [tool], tool_choice: "required", format: "json" }).output).toEqual({ tools: [functionTool], reasoning: true, constraint: { type: "json_object" } });
    expect(chatSpecOf({ tools: [tool], tool_choice: { name: "other" } }).output?.toolChoice).toBeUndefined();
    expect(chatSpecOf({ tools: [tool], tool_choice: "required" }, EVERYTHING, pathModel, "none").output?.toolChoice).toBeUndefined();
    expect(chatSpecOf({ tool_choice: "whatever" }).output?.toolChoice).toBeUndefined();
    expect(refusal(() => chatSpecOf({ tools: [tool] }, CHAT_ONLY)).message).toBe('"tiny.gguf" does not support tools');
    // tool_choice "none" asks for no calls, so a model without tools may take the request.
    expect(chatSpecOf({ tools: [tool], tool_choice: "none" }, CHAT_ONLY).output).toEqual({ tools: [functionTool], reasoning: false, toolChoice: "none" });
    const schema = { type: "object", properties: { a: { type: "integer" } } };
    expect(chatSpecOf({ format: schema }).output?.constraint).toEqual({ type: "json_schema", schema });
    expect(refusal(() => chatSpecOf({ format: "yaml" })).param).toBe("format");
  });
});

describe("toChatMessages", () => {
  test("images and audio through their readers, thinking, tool calls with object arguments, tool names", () => {
    const body = validate(chatSchema, {
      model: "m",
      messages: [
        { role: "user", content: "Look", images: ["AAAA"] },
        { role: "assistant", content: "", thinking: "hm", tool_calls: [{ function: { name: "weather", arguments: { city: "Oslo" } } }] },
        { role: "tool", content: "rain", tool_name: "weather" },
      ],
    });
    expect(toChatMessages(body.messages!, (images) => images.map(() => new Uint8Array([9])))).toEqual([
      { role: "user", content: "Look", images: [new Uint8Array([9])] },
      { role: "assistant", content: "", reasoning_content: "hm", tool_calls: [{ type: "function", function: { name: "weather", arguments: { city: "Oslo" } } }] },
      { role: "tool", content: "rain", name: "weather" },
    ]);
  });
});

describe("ollamaGenerateSpec", () => {
  test("a prompt is one user turn under the model's layers, cut to fit; system, template, suffix and think replace or add", () => {
    expect(generateSpecOf({}, CHAT_ONLY)).toEqual({
      prompt: { kind: "conversation", messages: [{ role: "user", content: "Why?" }], layers: {}, overflow: "cut" },
      output: { reasoning: false },
      options: ollamaDefaults(),
      limit: { overflow: "allow" },
    });
    expect(generateSpecOf({ system: "S", template: "T", suffix: "end", think: "low", truncate: false }).prompt).toEqual({
      kind: "conversation", messages: [{ role: "user", content: "Why?" }], layers: {}, overflow: "refuse", system: "S", template: "T", think: "low", suffix: "end",
    });
    const images = [new Uint8Array([1])];
    expect(generateSpecOf({}, CHAT_ONLY, pathModel, images).prompt).toMatchObject({ messages: [{ role: "user", content: "Why?", images }] });
  });

  test("max_tokens (the AI SDK completion model's limit) is read as num_predict; max_output_tokens and options win", () => {
    expect(generateSpecOf({ max_tokens: 8 }).options.maxTokens).toBe(8);
    expect(generateSpecOf({ max_tokens: 8, max_output_tokens: 5 }).options.maxTokens).toBe(5);
    expect(generateSpecOf({ max_tokens: 8, options: { num_predict: 3 } }).options.maxTokens).toBe(3);
  });

  test("an old context is the prefix, and the model's seed messages are left out", () => {
    const model = storeModel({ system: "Sys", messages: [{ role: "user", content: "seed" }] });
    expect(generateSpecOf({ context: [1, 2, 3] }, CHAT_ONLY, model).prompt).toEqual({
      kind: "conversation", messages: [{ role: "user", content: "Why?" }], layers: { ...model.stored!, messages: [] }, overflow: "cut", prefix: [1, 2, 3],
    });
  });

  test("raw: the text as it is, with its images; no reasoning split", () => {
    const images = [new Uint8Array([1])];
    expect(generateSpecOf({ raw: true, format: "json", logprobs: true }, EVERYTHING, pathModel, images)).toEqual({
      prompt: { kind: "text", text: "Why?", media: { images }, overflow: "cut" },
      output: { reasoning: false, constraint: { type: "json_object" } },
      options: ollamaDefaults(),
      limit: { overflow: "allow" },
      logprobs: 0,
    });
    expect(generateSpecOf({}, EVERYTHING).output).toEqual({ reasoning: true });
  });
});

const arrived = performance.now();
const timing = { arrived, loaded: arrived + 2 };
const metrics = { load_duration: 2_000_000, prompt_eval_count: 7, prompt_eval_duration: 20_000_000, eval_count: 3, eval_duration: 500_000_000 };

/** A wire object with its clock fields checked and set aside: created_at (an ISO time) and total_duration. */
function steady(object: unknown): Record<string, unknown> {
  const { created_at: createdAt, total_duration: total, ...rest } = object as Record<string, unknown>;
  expect(new Date(createdAt as string).toISOString()).toBe(createdAt as string);
  if (total !== undefined) expect(total as number).toBeGreaterThan(0);
  return rest;
}

async function linesOf(shape: NativeShape, events: ChatEvent[]) {
  const { sent, send } = collector<unknown>();
  const usages: unknown[] = [];
  await sendNativeChunks(choiceOf(events).events(), shape, send, (u) => usages.push(u));
  return { lines: sent.map((line) => ("error" in (line as object) ? line as Record<string, unknown> : steady(line))), usages };
}

describe("/api/chat chunks", () => {
  test("thinking and content chunks, tool calls sent whole once complete, then the final object with the timings", async () => {
    const { lines, usages } = await linesOf(chatShape("tiny", false, timing), [
      reasoning("hmm"), content(""), content("Sure."), ...toolCallEvents(0, "call_1", "weather", { city: "Oslo" }), done("tool_calls"),
    ]);
    expect(lines).toEqual([
      { model: "tiny", message: { role: "assistant", content: "", thinking: "hmm" }, done: false },
      { model: "tiny", message: { role: "assistant", content: "Sure." }, done: false },
      { model: "tiny", message: { role: "assistant", content: "", tool_calls: [{ id: "call_1", function: { index: 0, name: "weather", arguments: { city: "Oslo" } } }] }, done: false },
      { model: "tiny", message: { role: "assistant", content: "" }, done_reason: "stop", done: true, ...metrics },
    ]);
    expect(usages).toEqual([usage()]);
  });

  test("logprobs ride on their chunks; out of tokens is done_reason length; a cancelled reply sends no final object", async () => {
    const lp = { token: 1, text: "a", logprob: -Infinity, top: [{ token: 1, text: "a", logprob: -1 }] };
    const { lines } = await linesOf(chatShape("tiny", true, timing), [{ type: "content", text: "a", logprobs: [lp] }, done("length")]);
    expect(lines[0]).toEqual({
      model: "tiny", message: { role: "assistant", content: "a" }, done: false,
      logprobs: [{ token: "a", logprob: -9999, bytes: [97], top_logprobs: [{ token: "a", logprob: -1, bytes: [97] }] }],
    });
    expect(lines[1]).toMatchObject({ done_reason: "length", done: true });
    const cancelled = await linesOf(chatShape("tiny", false, timing), [content("a"), done("cancelled")]);
    expect(cancelled.lines.map((line) => line.done)).toEqual([false]);
    expect(cancelled.usages).toEqual([]);
  });

  test("an engine error is an error line", async () => {
    const { lines } = await linesOf(chatShape("tiny", false, timing), [content("a"), { type: "error", code: "engine_failure", message: "the engine stopped" }]);
    expect(lines.at(-1)).toEqual({ error: "the engine stopped" });
  });

  test("stream false: one object with the whole message, calls numbered", async () => {
    const result: ChatResult = {
      content: "Sure.", reasoning: "hmm", finishReason: "tool_calls", usage: usage(), logprobs: [],
      toolCalls: [{ id: "call_1", name: "a", arguments: {} }, { id: "call_2", name: "b", arguments: { x: 1 } }],
    };
    expect(steady(await nativeReply(result, chatShape("tiny", false, timing)))).toEqual({
      model: "tiny",
      message: {
        role: "assistant", content: "Sure.", thinking: "hmm",
        tool_calls: [{ id: "call_1", function: { index: 0, name: "a", arguments: {} } }, { id: "call_2", function: { index: 1, name: "b", arguments: { x: 1 } } }],
      },
      done_reason: "stop", done: true, ...metrics,
    });
  });
});

describe("/api/generate chunks", () => {
  test("response and thinking chunks, then the final object with the context of the whole answer", async () => {
    const exchanged: string[] = [];
    const shape = generateShape("tiny", false, timing, async (answer) => (exchanged.push(answer), [1, 2, 3]));
    const { lines } = await linesOf(shape, [reasoning("hmm"), content("Be"), content("cause."), done("stop", { usage: usage({ promptMs: 0 }) })]);
    expect(lines).toEqual([
      { model: "tiny", response: "", thinking: "hmm", done: false },
      { model: "tiny", response: "Be", done: false },
      { model: "tiny", response: "cause.", done: false },
      { model: "tiny", response: "", done: true, done_reason: "stop", context: [1, 2, 3], load_duration: 2_000_000, prompt_eval_count: 7, eval_count: 3, eval_duration: 500_000_000 },
    ]);
    expect(exchanged).toEqual(["Because."]);
  });

  test("raw mode has no context; stream false holds the whole response", async () => {
    const result: ChatResult = { content: "Because.", reasoning: "", toolCalls: [], finishReason: "length", usage: usage(), logprobs: [] };
    expect(steady(await nativeReply(result, generateShape("tiny", false, timing)))).toEqual({ model: "tiny", response: "Because.", done: true, done_reason: "length", ...metrics });
  });
});
