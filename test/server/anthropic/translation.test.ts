// Anthropic's /v1/messages as pure translation, with no model, engine or server: content blocks become
// chat messages and the body the chat spec, a finished reply becomes the message body, and hand-made
// chat events become the streamed event sequence, exactly.
import { describe, expect, test } from "bun:test";
import type { ChatEvent } from "../../../src/generation/chat-events.ts";
import { ApiError } from "../../../src/server/api-error.ts";
import { countTokensSpec, messagesSpec } from "../../../src/server/anthropic/messages.ts";
import { chatMessages, outputRequest } from "../../../src/server/anthropic/messages-input.ts";
import { contentBlocks, messageBody, messagesUsage, stopReasonOf } from "../../../src/server/anthropic/messages-output.ts";
import { MessageEventWriter } from "../../../src/server/anthropic/messages-stream.ts";
import { countTokensSchema, messagesSchema } from "../../../src/server/anthropic/schema.ts";
import type { ServedModel } from "../../../src/server/model-service.ts";
import { profiles, type ProfileName } from "../../../src/server/profiles/index.ts";
import { validate } from "../../../src/server/validation.ts";
import { collector, content, done, pathModel, reasoning, storeModel, toolCallEvents, usage } from "../translation-fixture.ts";

const noImages = async (): Promise<Uint8Array> => {
  throw new Error("no image expected");
};
const parse = (body: Record<string, unknown>) => validate(messagesSchema, { model: "tiny", max_tokens: 100, messages: [{ role: "user", content: "Hi" }], ...body });

/** The spec the route builds on this profile, as its handler does: output request, messages, then the spec. */
async function specOf(profile: ProfileName, body: Record<string, unknown>, model: ServedModel = pathModel) {
  const parsed = parse(body);
  const output = outputRequest(parsed);
  return messagesSpec(profiles[profile], model, parsed, await chatMessages(parsed, noImages), output);
}

async function refusal(body: Record<string, unknown>): Promise<ApiError> {
  const error = await specOf("b", body).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("messagesSpec", () => {
  test("system and messages, max_tokens clamped to the context, stop_sequences as stop strings, thinking off", async () => {
    expect(await specOf("b", { system: "Be brief.", stop_sequences: ["###"] })).toEqual({
      prompt: { kind: "conversation", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }], templateVariables: { enable_thinking: false } },
      output: { tools: [], parallelToolCalls: true },
      options: { temperature: 1, topP: 1, topK: 0, minP: 0, repeatPenalty: 1, stop: ["###"] },
      limit: { maxTokens: 100, overflow: "clamp" },
    });
  });

  test("thinking: a budget when enabled, the template's switch from thinking or output_config.effort", async () => {
    const enabled = await specOf("a", { max_tokens: 200, thinking: { type: "enabled", budget_tokens: 64 } });
    expect(enabled.reasoningBudget).toBe(64);
    expect(enabled.prompt).toMatchObject({ templateVariables: { enable_thinking: true } });
    expect((await specOf("a", { thinking: { type: "adaptive" } })).reasoningBudget).toBeUndefined();
    expect((await specOf("a", { thinking: { type: "disabled" } })).prompt).toMatchObject({ templateVariables: { enable_thinking: false } });
    expect((await specOf("a", { output_config: { effort: "high" } })).prompt).toMatchObject({ templateVariables: { enable_thinking: true } });
  });

  test("parameters: the profile's defaults < the model's < the body's; synonyms by the profile's preference", async () => {
    const model = storeModel({ parameters: { temperature: 0.4, top_k: 12, stop: ["<end>"] } });
    const spec = await specOf("c", { temperature: 0.9, top_p: 0.8, repeat_penalty: 1.2, repetition_penalty: 1.1 }, model);
    expect(spec.prompt).toMatchObject({ layers: model.stored! });
    expect(spec.options).toEqual({ temperature: 0.9, topP: 0.8, topK: 12, minP: 0, repeatPenalty: 1.2, stop: ["<end>"] });
    expect((await specOf("b", { repeat_penalty: 1.2, repetition_penalty: 1.1 })).options.repeatPenalty).toBe(1.1);
    expect((await specOf("b", { stop_sequences: ["x"] }, model)).options.stop).toEqual(["x"]);
  });

  test("tools, tool_choice and output_config.format as the output request", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const tool = { name: "weather", description: "Forecast", input_schema: schema };
    expect((await specOf("b", { tools: [tool], tool_choice: { type: "any", disable_parallel_tool_use: true } })).output).toEqual({
      tools: [{ type: "function", function: { name: "weather", description: "Forecast", parameters: schema } }], parallelToolCalls: false, toolChoice: "required",
    });
    expect((await specOf("b", { tools: [tool], tool_choice: { type: "tool", name: "weather" } })).output?.toolChoice).toEqual({ name: "weather" });
    expect((await specOf("b", { tools: [{ name: "bare" }], tool_choice: { type: "none" } })).output).toEqual({
      tools: [{ type: "function", function: { name: "bare", parameters: { type: "object", properties: {} } } }], parallelToolCalls: true, toolChoice: "none",
    });
    expect((await specOf("b", { output_config: { format: { type: "json_schema", schema } } })).output?.constraint).toEqual({ type: "json_schema", schema });
    expect((await refusal({ tools: [tool], tool_choice: { type: "any" }, thinking: { type: "enabled", budget_tokens: 10 } })).message)
      .toBe("Thinking may not be enabled when tool_choice forces tool use.");
    expect((await refusal({ tools: [{ type: "web_search_20250305", name: "web_search" }] })).message).toContain('server tool "web_search_20250305"');
  });

  test("count_tokens: the same prompt, no reply limit and no stop strings", async () => {
    const body = validate(countTokensSchema, { model: "tiny", system: "Be brief.", messages: [{ role: "user", content: "Hi" }] });
    expect(countTokensSpec(profiles.a, pathModel, body, await chatMessages(body, noImages), outputRequest(body))).toEqual({
      prompt: { kind: "conversation", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }], templateVariables: { enable_thinking: false } },
      output: { tools: [], parallelToolCalls: true },
      options: { temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1, repeatLastN: 64 },
      limit: { overflow: "clamp" },
    });
  });
});

describe("chatMessages", () => {
  test("tool_use blocks are the assistant's calls, tool_result blocks tool messages before the user's text", async () => {
    const body = parse({
      system: [{ type: "text", text: "One." }, { type: "text", text: "Two." }],
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: [{ type: "thinking", thinking: "Use the tool." }, { type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "rain" }], is_error: true }, { type: "text", text: "And?" }] },
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }] },
      ],
    });
    const read: string[] = [];
    expect(await chatMessages(body, async (url) => (read.push(url), new Uint8Array([1])))).toEqual([
      { role: "system", content: "One.\nTwo." },
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: "Checking.", tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: { city: "Oslo" } } }], reasoning_content: "Use the tool." },
      { role: "tool", tool_call_id: "toolu_1", content: "Error: rain" },
      { role: "user", content: "And?" },
      { role: "user", content: "", images: [new Uint8Array([1])] },
    ]);
    expect(read).toEqual(["data:image/png;base64,AA=="]);
  });

  test("a tool_result that answers no tool_use of the turn before is refused", async () => {
    const body = parse({ messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "x" }] }] });
    const error = await chatMessages(body, noImages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toContain("unexpected `tool_use_id` found in `tool_result` blocks: toolu_9");
  });
});

describe("message body", () => {
  test("thinking, text and tool_use blocks, the stop reason in Anthropic's words, cached tokens as cache reads", () => {
    const call = { id: "chatcmpl-tool-abc", name: "weather", arguments: { city: "Oslo" } };
    const result = { content: "Checking.", reasoning: "Hmm.", toolCalls: [call], finishReason: "tool_calls" as const };
    expect(messageBody("msg_1", "tiny", contentBlocks(result), stopReasonOf(result, []), messagesUsage(usage({ promptTokens: 10, cachedPromptTokens: 4 })))).toEqual({
      id: "msg_1", type: "message", role: "assistant", model: "tiny",
      content: [
        { type: "thinking", thinking: "Hmm.", signature: "" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_abc", name: "weather", input: { city: "Oslo" } },
      ],
      stop_reason: "tool_use", stop_sequence: null,
      usage: { input_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 3 },
    });
  });

  test("stop reasons: a named stop sequence, the model's own stop string, the token limit", () => {
    expect(stopReasonOf({ finishReason: "stop", stop: "###" }, ["###"])).toEqual({ stop_reason: "stop_sequence", stop_sequence: "###" });
    expect(stopReasonOf({ finishReason: "stop", stop: "<|im_end|>" }, ["###"])).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(stopReasonOf({ finishReason: "length" }, [])).toEqual({ stop_reason: "max_tokens", stop_sequence: null });
    expect(contentBlocks({ content: "\n", reasoning: "", toolCalls: [{ id: "toolu_1", name: "f", arguments: {} }] })).toEqual([{ type: "tool_use", id: "toolu_1", name: "f", input: {} }]);
    expect(contentBlocks({ content: "", reasoning: "", toolCalls: [] })).toEqual([]);
  });
});

describe("MessageEventWriter", () => {
  async function eventsOf(events: ChatEvent[], stopSequences: string[] = []) {
    const { sent, send } = collector<{ type: string } & Record<string, unknown>>();
    const writer = new MessageEventWriter("msg_1", "tiny", stopSequences, send);
    await writer.start(7);
    for (const event of events) await writer.push(event);
    return sent;
  }
  const start = { type: "message_start", message: {
    id: "msg_1", type: "message", role: "assistant", model: "tiny", content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
  } };
  const end = (stop_reason: string, stop_sequence: string | null = null) => [
    { type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 } },
    { type: "message_stop" },
  ];

  test("thinking, text, then a tool call: one block each, opened and closed in turn; padding whitespace joins the text", async () => {
    expect(await eventsOf([reasoning("Hmm"), content(" "), content("Sure."), ...toolCallEvents(0, "chatcmpl-tool-7", "weather", { city: "Oslo" }), done("tool_calls")])).toEqual([
      start, { type: "ping" },
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hmm" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: " Sure." } },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_7", name: "weather", input: {} } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"city":' } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"Oslo"}' } },
      { type: "content_block_stop", index: 2 },
      ...end("tool_use"),
    ]);
  });

  test("whitespace before a call is dropped; a reply of whitespace alone is still its text block", async () => {
    const beforeCall = await eventsOf([content("\n"), ...toolCallEvents(0, "toolu_2", "f", {}), done("tool_calls")]);
    expect(beforeCall.filter((e) => e.type === "content_block_start").map((e) => (e.content_block as { type: string }).type)).toEqual(["tool_use"]);
    expect((await eventsOf([content("\n"), done("stop")])).slice(2)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "\n" } },
      { type: "content_block_stop", index: 0 },
      ...end("end_turn"),
    ]);
  });

  test("a named stop sequence ends with stop_sequence; an engine error is an error event in Anthropic's types", async () => {
    expect((await eventsOf([content("a"), done("stop", { stop: "###" })], ["###"])).slice(-2)).toEqual(end("stop_sequence", "###"));
    expect((await eventsOf([content("a"), { type: "error", code: "busy", message: "queue full" }])).at(-1)).toEqual({ type: "error", error: { type: "overloaded_error", message: "queue full" } });
    expect((await eventsOf([{ type: "error", code: "engine_failure", message: "crashed" }])).at(-1)).toEqual({ type: "error", error: { type: "api_error", message: "crashed" } });
  });
});
