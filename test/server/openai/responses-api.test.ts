// OpenAI's Responses API (what Codex speaks) end to end on profiles a, b and c: real `llamux serve`
// processes, the pinned `openai` client, generated random-weight models. Random weights write nonsense,
// so the tests check structure, counts, event order, and what a grammar forces: tool_choice "required"
// or a named tool, and text.format with a zod schema, must give valid output from any weights.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import Ajv2020 from "ajv/dist/2020.js";
import { MODEL, PROFILES, startAgentServers, type AgentServers, type Profile } from "../agent-fixture.ts";

let fixture: AgentServers;
let jpegUri: string;
const clients: Partial<Record<Profile, OpenAI>> = {};
const ajv = new Ajv2020({ strict: false });

const weather = {
  type: "object",
  properties: { city: { enum: ["Paris", "Oslo"] }, days: { type: "integer", minimum: 1, maximum: 7 } },
  required: ["city", "days"],
  additionalProperties: false,
};
const search = { type: "object", properties: { query: { type: "string", maxLength: 5 } }, required: ["query"], additionalProperties: false };
const tools: OpenAI.Responses.FunctionTool[] = [
  { type: "function", name: "get_weather", description: "Weather forecast", parameters: weather, strict: true },
  { type: "function", name: "search", parameters: search, strict: true },
];
const validators: Record<string, ReturnType<typeof ajv.compile>> = { get_weather: ajv.compile(weather), search: ajv.compile(search) };

function expectValidCall(item: OpenAI.Responses.ResponseOutputItem | undefined, only?: string): OpenAI.Responses.ResponseFunctionToolCall {
  if (item?.type !== "function_call") throw new Error(`expected a function_call item, got ${JSON.stringify(item)}`);
  if (only) expect(item.name).toBe(only);
  const validate = validators[item.name];
  if (!validate) throw new Error(`call to an undeclared tool ${item.name}`);
  const args: unknown = JSON.parse(item.arguments);
  if (!validate(args)) throw new Error(`arguments ${item.arguments} of ${item.name}: ${ajv.errorsText(validate.errors)}`);
  // ids as OpenAI's service writes them
  expect(item.call_id).toMatch(/^call_[0-9a-f]{32}$/);
  expect(item.id).toMatch(/^fc_[0-9a-f]{32}$/);
  return item;
}

beforeAll(async () => {
  fixture = await startAgentServers();
  jpegUri = `data:image/jpeg;base64,${fixture.jpegBase64}`;
  for (const profile of PROFILES) {
    clients[profile] = new OpenAI({ baseURL: `${fixture.servers[profile].baseUrl}/v1`, apiKey: fixture.keyOf(profile), maxRetries: 0, timeout: 300_000 });
  }
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
});

describe.each(PROFILES)("profile %s", (profile) => {
  const client = () => clients[profile]!;

  test("responses.create with a string input: a message item, usage, and a stored response", async () => {
    const response = await client().responses.create({ model: MODEL, input: "Tell me a story", max_output_tokens: 6, temperature: 0 });
    expect(response.id).toStartWith("resp_");
    expect(response.object).toBe("response");
    expect(response.model).toBe(MODEL);
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details?.reason).toBe("max_output_tokens");
    expect(response.output).toHaveLength(1);
    const message = response.output[0]!;
    if (message.type !== "message") throw new Error("expected a message");
    expect(message.role).toBe("assistant");
    expect(message.content[0]!.type).toBe("output_text");
    expect(response.output_text).toBe((message.content[0] as OpenAI.Responses.ResponseOutputText).text);
    expect(response.usage!.output_tokens).toBe(6);
    expect(response.usage!.input_tokens).toBeGreaterThan(3);
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
  });

  test("Codex's warm-up {model, input: \"\", max_output_tokens: 1} succeeds", async () => {
    const response = await client().responses.create({ model: MODEL, input: "", max_output_tokens: 1 });
    expect(response.usage!.output_tokens).toBe(1);
    expect(response.output[0]!.type).toBe("message");
  });

  test("responses.stream: the full event sequence, numbered, and a final response matching the deltas", async () => {
    const stream = client().responses.stream({ model: MODEL, instructions: "Be brief", input: [{ role: "user", content: "hi" }], max_output_tokens: 8 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.slice(0, 4).map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    expect(events.slice(-4).map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"]);
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(final.output_text).toBe(deltas.join(""));
    expect(final.instructions).toBe("Be brief");
    expect(final.usage!.output_tokens).toBe(8);
  });

  test("tool_choice required: a valid function call; its output goes back through function_call_output", async () => {
    const first = await client().responses.create({ model: MODEL, input: "Weather in Paris?", tools, tool_choice: "required", parallel_tool_calls: false, max_output_tokens: 200 });
    expect(first.status).toBe("completed");
    const call = expectValidCall(first.output.find((item) => item.type === "function_call"));
    const second = await client().responses.create({
      model: MODEL, tools, max_output_tokens: 4, store: false,
      input: [{ role: "user", content: "Weather in Paris?" }, call, { type: "function_call_output", call_id: call.call_id, output: '{"temperature": 21}' }],
    });
    expect(second.output.length).toBeGreaterThan(0);
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
  });

  test("a named tool, streamed: arguments stream as function_call_arguments.delta, then .done", async () => {
    const stream = client().responses.stream({
      model: MODEL, input: "Find cats", tools, tool_choice: { type: "function", name: "search" }, max_output_tokens: 200,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const call = expectValidCall(final.output.find((item) => item.type === "function_call"), "search");
    const deltas = events.flatMap((e) => (e.type === "response.function_call_arguments.delta" ? [e.delta] : []));
    const done = events.find((e) => e.type === "response.function_call_arguments.done");
    expect(deltas.join("")).toBe(call.arguments);
    expect(done && "arguments" in done ? done.arguments : undefined).toBe(call.arguments);
    expect(events.at(-1)!.type).toBe("response.completed");
  });

  test("text.format with a zod schema: the parsed output validates", async () => {
    const Weather = z.object({ city: z.enum(["Paris", "Oslo"]), days: z.number().int().min(1).max(7) });
    const response = await client().responses.parse({ model: MODEL, input: "Weather?", text: { format: zodTextFormat(Weather, "weather") }, max_output_tokens: 100 });
    expect(response.status).toBe("completed");
    expect(Weather.parse(response.output_parsed)).toEqual(response.output_parsed!);
  });

  test("previous_response_id continues the stored conversation; an unknown id is a 404", async () => {
    const first = await client().responses.create({ model: MODEL, input: "Remember the number 7", max_output_tokens: 3 });
    const next = await client().responses.create({ model: MODEL, input: "Which number?", previous_response_id: first.id, max_output_tokens: 3 });
    expect(next.previous_response_id).toBe(first.id);
    expect(next.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens + 3);
    // the second turn starts with the first one's prompt: its tokens come from the cache, and say so
    expect(next.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(next.output.find((item) => item.type === "message")?.id ?? "msg_").toStartWith("msg_");
    const unknown = await client().responses.create({ model: MODEL, input: "x", previous_response_id: "resp_unknown" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).message).toContain("resp_unknown");
    const notStored = await client().responses.create({ model: MODEL, input: "x", max_output_tokens: 1, store: false });
    const missing = await client().responses.create({ model: MODEL, input: "y", previous_response_id: notStored.id }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("an input_image reaches the vision model", async () => {
    const text = await client().responses.create({ model: MODEL, input: "What is this?", max_output_tokens: 2 });
    const withImage = await client().responses.create({
      model: MODEL, max_output_tokens: 2,
      input: [{ role: "user", content: [{ type: "input_text", text: "What is this?" }, { type: "input_image", image_url: jpegUri, detail: "auto" }] }],
    });
    // The image's 16 tokens count in the prompt.
    expect(withImage.usage!.input_tokens).toBeGreaterThanOrEqual(text.usage!.input_tokens + 16);
  });

  test("reasoning.effort on a reasoning model gives a reasoning item, streamed as reasoning_text deltas", async () => {
    const response = await client().responses.create({ model: fixture.thinkModel, input: "Think", reasoning: { effort: "low" }, max_output_tokens: 6 });
    const reasoning = response.output[0]!;
    if (reasoning.type !== "reasoning") throw new Error(`expected a reasoning item, got ${reasoning.type}`);
    expect(reasoning.content?.[0]?.type).toBe("reasoning_text");
    expect(reasoning.content![0]!.text.length).toBeGreaterThan(0);
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const off = await client().responses.create({ model: fixture.thinkModel, input: "Answer", reasoning: { effort: "none" }, max_output_tokens: 4 });
    expect(off.output.map((item) => item.type)).toEqual(["message"]);

    const stream = client().responses.stream({ model: fixture.thinkModel, input: "Think", reasoning: { effort: "high" }, max_output_tokens: 6 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toContain("response.reasoning_text.delta");
    expect(types).toContain("response.reasoning_text.done");
    expect((await stream.finalResponse()).output[0]!.type).toBe("reasoning");
  });

  test("bad input is a 400 in OpenAI's shape", async () => {
    const unknownItem = await client().responses.create({ model: MODEL, input: [{ type: "computer_call_output" } as never] }).catch((e: unknown) => e);
    expect(unknownItem).toBeInstanceOf(OpenAI.BadRequestError);
    expect((unknownItem as Error).message).toContain("computer_call_output");
    const orphan = await client().responses.create({ model: MODEL, input: [{ type: "function_call_output", call_id: "call_x", output: "1" }] }).catch((e: unknown) => e);
    expect(orphan).toBeInstanceOf(OpenAI.BadRequestError);
    expect((orphan as Error).message).toContain("call_x");
    const badChoice = await client().responses.create({ model: MODEL, input: "x", tools, tool_choice: { type: "function", name: "nope" } }).catch((e: unknown) => e);
    expect(badChoice).toBeInstanceOf(OpenAI.BadRequestError);
  });

  test("a prompt larger than the trained context is a 400 naming its size and the most context it could have, and no setting", async () => {
    // beyond the model's trained 4096 tokens (a shorter one grows the context on profiles a and c): nothing is reloaded;
    // b's --ctx-size is vLLM's --max-model-len, a limit, but raising it would not help either
    const error = await client().responses.create({ model: MODEL, input: "word ".repeat(5000) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const message = (error as Error).message;
    expect(message).toMatch(new RegExp(`prompt is too long: \\d+ tokens > ${profile === "b" ? 1023 : 4095} maximum \\(.*trained for`));
    expect(message).not.toMatch(/--ctx-size|--max-model-len|OLLAMA_CONTEXT_LENGTH|num_ctx/);
  });
});

describe("tool calls in LFM2's syntax (profile a)", () => {
  test("tool_choice required gives a valid call, streamed and not", async () => {
    const response = await clients.a!.responses.create({ model: fixture.lfm2Model, input: "Weather?", tools, tool_choice: "required", parallel_tool_calls: false, max_output_tokens: 200 });
    expectValidCall(response.output.find((item) => item.type === "function_call"));
    const stream = clients.a!.responses.stream({ model: fixture.lfm2Model, input: "Weather?", tools, tool_choice: { type: "function", name: "get_weather" }, max_output_tokens: 200 });
    for await (const _ of stream) { /* drain */ }
    expectValidCall((await stream.finalResponse()).output.find((item) => item.type === "function_call"), "get_weather");
  });
});
