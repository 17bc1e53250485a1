// /v1/responses as pure translation, with no model, engine or server: input items and the body's fields
// become the chat spec, a finished reply becomes output items and the response object, and hand-made
// chat events become OpenAI's streamed event sequence, exactly (made-up ids numbered in order).
import { describe, expect, test } from "bun:test";
import type { ChatMessage } from "../../../src/chat/types.ts";
import type { ChatEvent } from "../../../src/generation/chat-events.ts";
import { ApiError } from "../../../src/server/api-error.ts";
import type { ServedModel } from "../../../src/server/model-service.ts";
import { profiles, type ProfileName } from "../../../src/server/profiles/index.ts";
import { requestOptions } from "../../../src/server/request-options.ts";
import { assistantTurn, responsesSpec } from "../../../src/server/openai/responses.ts";
import { inputMessages } from "../../../src/server/openai/responses-input.ts";
import { outputItems, responseObject, responsesUsage, type ResponseEnvelope } from "../../../src/server/openai/responses-output.ts";
import { responsesSchema, type ResponsesRequest } from "../../../src/server/openai/responses-schema.ts";
import { ResponseEventWriter } from "../../../src/server/openai/responses-stream.ts";
import { validate } from "../../../src/server/validation.ts";
import { collector, content, done, pathModel, reasoning, stableIds, storeModel, toolCallEvents, usage } from "../translation-fixture.ts";

const parse = (body: Record<string, unknown>): ResponsesRequest => validate(responsesSchema, { model: "tiny", ...body });
const noImages = async (): Promise<Uint8Array> => {
  throw new Error("no image expected");
};
const noAudio = (): Uint8Array => {
  throw new Error("no audio expected");
};

/** The spec the route builds on this profile, the input read with no history. */
async function specOf(profile: ProfileName, body: Record<string, unknown>, model: ServedModel = pathModel) {
  const parsed = parse(body);
  const options = requestOptions(profiles[profile], model, parsed);
  return responsesSpec(model, parsed, await inputMessages(parsed, noImages, noAudio), options);
}

describe("responsesSpec", () => {
  test("a string input is one user turn after the instructions; the reply is clamped to the context", async () => {
    expect(await specOf("b", { input: "Hi", instructions: "Be brief." })).toEqual({
      prompt: { kind: "conversation", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] },
      output: { tools: [], parallelToolCalls: true },
      options: { temperature: 1, topP: 1, topK: 0, minP: 0, repeatPenalty: 1 },
      limit: { overflow: "clamp" },
    });
    expect((await specOf("a", { input: "Hi", max_output_tokens: 64 })).limit).toEqual({ maxTokens: 64, overflow: "clamp" });
  });

  test("leading system and developer messages join the instructions as one system message", async () => {
    const spec = await specOf("c", {
      instructions: "Rule one.",
      input: [{ role: "developer", content: "Rule two." }, { role: "user", content: [{ type: "input_text", text: "Go" }] }],
    });
    expect(spec.prompt).toEqual({ kind: "conversation", messages: [{ role: "system", content: "Rule one.\n\nRule two." }, { role: "user", content: "Go" }] });
  });

  test("the model's layers and parameters; the request's fields over them, synonyms by the profile's preference", async () => {
    const model = storeModel({ system: "From the Modelfile.", parameters: { temperature: 0.2, top_p: 0.5 } });
    const spec = await specOf("b", { input: "Hi", temperature: 0.7, repeat_penalty: 1.2, repetition_penalty: 1.05 }, model);
    expect(spec.prompt).toMatchObject({ layers: model.stored! });
    expect(spec.options).toEqual({ temperature: 0.7, topP: 0.5, topK: 0, minP: 0, repeatPenalty: 1.05 });
    expect((await specOf("a", { input: "Hi", repeat_penalty: 1.2, repetition_penalty: 1.05 })).options.repeatPenalty).toBe(1.2);
  });

  test("function tools (others left out), tool_choice, parallel_tool_calls, text.format and reasoning.effort", async () => {
    const parameters = { type: "object", properties: { q: { type: "string" } } };
    const spec = await specOf("b", {
      input: "Hi",
      tools: [{ type: "function", name: "search", description: "Looks up", parameters }, { type: "web_search" }],
      tool_choice: { type: "function", name: "search" },
      parallel_tool_calls: false,
      reasoning: { effort: "low" },
    });
    expect(spec.output).toEqual({
      tools: [{ type: "function", function: { name: "search", description: "Looks up", parameters } }], parallelToolCalls: false, toolChoice: { name: "search" },
    });
    expect(spec.prompt).toMatchObject({ templateVariables: { enable_thinking: true, reasoning_effort: "low" } });
    expect((await specOf("b", { input: "Hi", reasoning: { effort: "none" } })).prompt).toMatchObject({ templateVariables: { enable_thinking: false } });
    const schema = { type: "object", properties: { a: { type: "integer" } } };
    expect((await specOf("b", { input: "Hi", text: { format: { type: "json_schema", name: "a", schema } } })).output?.constraint).toEqual({ type: "json_schema", schema });
    expect((await specOf("b", { input: "Hi", text: { format: { type: "json_object" } } })).output?.constraint).toEqual({ type: "json_object" });
    expect((await specOf("b", { input: "Hi", text: { format: { type: "text" } } })).output?.constraint).toBeUndefined();
    await expect(specOf("b", { input: "Hi", tool_choice: "always" })).rejects.toThrow(ApiError);
    await expect(specOf("b", { input: "Hi", text: { format: { type: "json_schema" } } })).rejects.toThrow("text.format.schema is required for json_schema");
  });
});

describe("inputMessages", () => {
  test("function calls join the assistant turn, outputs become tool messages, reasoning goes to the next assistant turn", async () => {
    const body = parse({
      input: [
        { role: "user", content: "Weather?" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "Need a tool." }] },
        { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "call_1", output: "rain" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "It rains." }] },
      ],
    });
    expect(await inputMessages(body, noImages, noAudio)).toEqual([
      { role: "user", content: "Weather?" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: { city: "Oslo" } } }], reasoning_content: "Need a tool." },
      { role: "tool", content: "rain", tool_call_id: "call_1" },
      { role: "assistant", content: "It rains." },
    ]);
  });

  test("the stored history comes first and answers its calls; an output for an unknown call is refused", async () => {
    const history: ChatMessage[] = [{ role: "assistant", content: "", tool_calls: [{ id: "call_9", type: "function", function: { name: "f", arguments: {} } }] }];
    const body = parse({ input: [{ type: "function_call_output", call_id: "call_9", output: "ok" }] });
    expect(await inputMessages(body, noImages, noAudio, history)).toEqual([...history, { role: "tool", content: "ok", tool_call_id: "call_9" }]);
    const unknown = await inputMessages(parse({ input: [{ type: "function_call_output", call_id: "call_2", output: "ok" }] }), noImages, noAudio).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ApiError);
    expect((unknown as ApiError).param).toBe("input[0].call_id");
  });

  test("input_image parts go through the image reader", async () => {
    const read: string[] = [];
    const body = parse({ input: [{ role: "user", content: [{ type: "input_text", text: "What?" }, { type: "input_image", image_url: "data:image/png;base64,AA==" }] }] });
    const messages = await inputMessages(body, async (url) => (read.push(url), new Uint8Array([7])), noAudio);
    expect(read).toEqual(["data:image/png;base64,AA=="]);
    expect(messages).toEqual([{ role: "user", content: "What?", images: [new Uint8Array([7])] }]);
  });
});

const envelope = (body: Record<string, unknown> = {}): ResponseEnvelope => ({
  id: "resp_00000000000000000000000000000001", model: "tiny", createdAt: 1700000000, request: parse(body), temperature: 0.7, topP: 1,
});

/** A response object as JSON, its completion time (the clock's) checked and fixed. */
function settled<T>(value: T): T {
  const json = stableIds(value) as Record<string, unknown>;
  const visit = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    const record = node as Record<string, unknown>;
    if (typeof record.completed_at === "number") {
      expect(record.completed_at).toBeGreaterThanOrEqual(1700000000);
      record.completed_at = "<now>";
    }
    Object.values(record).forEach(visit);
  };
  visit(json);
  return json as T;
}

describe("response object and output items", () => {
  test("a finished reply: reasoning, message and call items, in that order, and the whole response", () => {
    const call = { id: "chatcmpl-tool-abc", name: "weather", arguments: { city: "Oslo" } };
    const output = outputItems({ content: "Checking.", reasoning: "Hmm.", toolCalls: [call] });
    const body: unknown = settled(responseObject(envelope({ instructions: "Be brief.", max_output_tokens: 50, tools: [{ type: "function", name: "weather" }] }),
      "completed", output, { usage: responsesUsage(usage({ cachedPromptTokens: 2 }), 1) }));
    expect(body).toEqual({
      id: "resp_1", object: "response", created_at: 1700000000, status: "completed", completed_at: "<now>", background: false, error: null,
      incomplete_details: null, instructions: "Be brief.", max_output_tokens: 50, max_tool_calls: null, model: "tiny",
      output: [
        { id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "Hmm." }] },
        { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Checking.", annotations: [], logprobs: [] }] },
        { id: "fc_1", type: "function_call", status: "completed", call_id: "call_abc", name: "weather", arguments: '{"city":"Oslo"}' },
      ],
      parallel_tool_calls: true, previous_response_id: null, reasoning: { effort: null, summary: null }, service_tier: "default", store: true,
      temperature: 0.7, text: { format: { type: "text" } }, tool_choice: "auto", tools: [{ type: "function", name: "weather" }], top_logprobs: 0, top_p: 1,
      truncation: "disabled",
      usage: { input_tokens: 7, input_tokens_details: { cached_tokens: 2 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 10 },
      metadata: {},
    });
  });

  test("whitespace around calls is no message; an empty reply is an empty message; out of tokens is incomplete", () => {
    const call = { id: "chatcmpl-tool-abc", name: "f", arguments: {} };
    expect(stableIds(outputItems({ content: "\n", reasoning: "", toolCalls: [call] })).map((i) => i.type)).toEqual(["function_call"]);
    expect(stableIds(outputItems({ content: "", reasoning: "", toolCalls: [] }))).toEqual([
      { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }] },
    ]);
    const incomplete = responseObject(envelope(), "incomplete", []);
    expect([incomplete.status, incomplete.completed_at, incomplete.incomplete_details]).toEqual(["incomplete", null, { reason: "max_output_tokens" }]);
  });

  test("the assistant turn a reply adds to the stored conversation", () => {
    const call = { id: "chatcmpl-tool-abc", name: "weather", arguments: { city: "Oslo" } };
    expect(assistantTurn(outputItems({ content: "Checking.", reasoning: "Hmm.", toolCalls: [call] }))).toEqual({
      role: "assistant", content: "Checking.", reasoning_content: "Hmm.",
      tool_calls: [{ id: "call_abc", type: "function", function: { name: "weather", arguments: { city: "Oslo" } } }],
    });
  });
});

describe("ResponseEventWriter", () => {
  /** The events a writer sends for these chat events (the last one a done or an error). */
  async function eventsOf(events: ChatEvent[], reasoningTokens = 0) {
    const { sent, send } = collector<{ type: string } & Record<string, unknown>>();
    const writer = new ResponseEventWriter(envelope(), send);
    await writer.start();
    for (const event of events) {
      if (event.type === "done") await writer.finish(event, reasoningTokens);
      else await writer.push(event);
    }
    sent.forEach((event, index) => expect(event.sequence_number).toBe(index));
    return settled(sent).map(({ sequence_number: _, ...event }) => event);
  }

  test("reasoning, then a tool call: each item added, filled and closed before the next", async () => {
    const events = await eventsOf([reasoning("Let me "), reasoning("check."), content(" "), ...toolCallEvents(0, "chatcmpl-tool-7", "weather", { city: "Oslo" }), done("tool_calls")], 2);
    const where = { item_id: "rs_1", output_index: 0, content_index: 0 };
    const call = { id: "fc_1", type: "function_call", call_id: "call_7", name: "weather" };
    expect(events.slice(0, 2).map((e) => [e.type, (e.response as { status: string }).status])).toEqual([["response.created", "in_progress"], ["response.in_progress", "in_progress"]]);
    expect(events.slice(2, -1)).toEqual([
      { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [], content: [] } },
      { type: "response.content_part.added", ...where, part: { type: "reasoning_text", text: "" } },
      { type: "response.reasoning_text.delta", ...where, delta: "Let me " },
      { type: "response.reasoning_text.delta", ...where, delta: "check." },
      { type: "response.reasoning_text.done", ...where, text: "Let me check." },
      { type: "response.content_part.done", ...where, part: { type: "reasoning_text", text: "Let me check." } },
      { type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "Let me check." }] } },
      { type: "response.output_item.added", output_index: 1, item: { ...call, status: "in_progress", arguments: "" } },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: '{"city":' },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: '"Oslo"}' },
      { type: "response.function_call_arguments.done", item_id: "fc_1", output_index: 1, name: "weather", arguments: '{"city":"Oslo"}' },
      { type: "response.output_item.done", output_index: 1, item: { ...call, status: "completed", arguments: '{"city":"Oslo"}' } },
    ]);
    const last = events.at(-1)! as { type: string; response: Record<string, unknown> };
    expect(last.type).toBe("response.completed");
    expect(last.response.status).toBe("completed");
    expect(last.response.output).toEqual([
      { id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "Let me check." }] },
      { ...call, status: "completed", arguments: '{"city":"Oslo"}' },
    ]);
    expect((last.response.usage as { output_tokens_details: unknown }).output_tokens_details).toEqual({ reasoning_tokens: 2 });
  });

  test("a message that runs out of tokens ends with response.incomplete", async () => {
    const events = await eventsOf([content("Hel"), content("lo"), done("length")]);
    const where = { item_id: "msg_1", output_index: 0, content_index: 0 };
    const text = { type: "output_text", text: "Hello", annotations: [], logprobs: [] };
    expect(events.slice(2, -1)).toEqual([
      { type: "response.output_item.added", output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } },
      { type: "response.content_part.added", ...where, part: { type: "output_text", text: "", annotations: [], logprobs: [] } },
      { type: "response.output_text.delta", ...where, delta: "Hel", logprobs: [] },
      { type: "response.output_text.delta", ...where, delta: "lo", logprobs: [] },
      { type: "response.output_text.done", ...where, text: "Hello", logprobs: [] },
      { type: "response.content_part.done", ...where, part: text },
      { type: "response.output_item.done", output_index: 0, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [text] } },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } });
  });

  test("a reply of whitespace alone is still sent as its message", async () => {
    const events = await eventsOf([content("\n"), done("stop")]);
    expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta)).toEqual(["\n"]);
  });

  test("an error closes the open item and ends the stream with response.failed", async () => {
    const events = await eventsOf([content("Hi"), { type: "error", code: "engine_failure", message: "the engine stopped" }]);
    expect(events.map((e) => e.type).slice(-3)).toEqual(["response.content_part.done", "response.output_item.done", "response.failed"]);
    expect(events.at(-1)).toMatchObject({
      response: { status: "failed", error: { code: "server_error", message: "the engine stopped" }, output: [{ id: "msg_1", status: "completed" }] },
    });
  });
});
