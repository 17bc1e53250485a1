// Anthropic's Messages API (what Claude Code speaks) end to end on profiles a, b and c: real `llamux
// serve` processes, the pinned `@anthropic-ai/sdk` client, generated random-weight models. Random weights
// write nonsense, so the tests check structure, counts and event order, and what a grammar forces:
// tool_choice "any" and a named tool must give valid tool_use blocks from any weights.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import Ajv2020 from "ajv/dist/2020.js";
import { KEY, MODEL, PROFILES, startAgentServers, type AgentServers, type Profile } from "../agent-fixture.ts";

let fixture: AgentServers;
let imageHost: ReturnType<typeof Bun.serve>;
const clients: Partial<Record<Profile, Anthropic>> = {};
const ajv = new Ajv2020({ strict: false });

const weather = {
  type: "object" as const,
  properties: { city: { enum: ["Paris", "Oslo"] }, days: { type: "integer", minimum: 1, maximum: 7 } },
  required: ["city", "days"],
  additionalProperties: false,
};
const search = { type: "object" as const, properties: { query: { type: "string", maxLength: 5 } }, required: ["query"], additionalProperties: false };
const tools: Anthropic.Tool[] = [
  { name: "get_weather", description: "Weather forecast", input_schema: weather },
  { name: "search", input_schema: search },
];
const validators: Record<string, ReturnType<typeof ajv.compile>> = { get_weather: ajv.compile(weather), search: ajv.compile(search) };
const ask: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Paris?" }];

function expectValidToolUse(block: Anthropic.ContentBlock | undefined, only?: string): Anthropic.ToolUseBlock {
  if (block?.type !== "tool_use") throw new Error(`expected a tool_use block, got ${JSON.stringify(block)}`);
  if (only) expect(block.name).toBe(only);
  const validate = validators[block.name];
  if (!validate) throw new Error(`call to an undeclared tool ${block.name}`);
  if (!validate(block.input)) throw new Error(`input ${JSON.stringify(block.input)} of ${block.name}: ${ajv.errorsText(validate.errors)}`);
  expect(block.id).toMatch(/^toolu_[0-9a-f]{32}$/);
  return block;
}

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof Anthropic.APIError)) throw new Error(`expected an APIError, got ${String(error)}`);
  return error;
}

/** The error's body is Anthropic's: {"type": "error", "error": {"type", "message"}}. */
function expectAnthropicError(error: InstanceType<typeof Anthropic.APIError>, status: number, type: string): string {
  expect(error.status).toBe(status);
  const body = error.error as { type?: string; error?: { type?: string; message?: string } };
  expect(body.type).toBe("error");
  expect(body.error?.type).toBe(type);
  return body.error?.message ?? "";
}

beforeAll(async () => {
  fixture = await startAgentServers();
  const jpeg = Buffer.from(fixture.jpegBase64, "base64");
  imageHost = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(jpeg, { headers: { "content-type": "image/jpeg" } }) });
  for (const profile of PROFILES) {
    clients[profile] = new Anthropic({ baseURL: fixture.servers[profile].baseUrl, apiKey: fixture.keyOf(profile), maxRetries: 0, timeout: 300_000 });
  }
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
  imageHost?.stop(true);
});

describe.each(PROFILES)("profile %s", (profile) => {
  const client = () => clients[profile]!;

  test("messages.create: a text block, the stop reason and usage", async () => {
    const message = await client().messages.create({
      model: MODEL, max_tokens: 6, system: [{ type: "text", text: "Be brief" }], messages: [{ role: "user", content: "Tell me a story" }],
      // Sampling fields the SDK's types no longer list; older clients and Claude Code still send them.
      ...({ temperature: 0, top_p: 0.9, top_k: 5 } as object),
    });
    expect(message.id).toStartWith("msg_");
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.model).toBe(MODEL);
    expect(message.content.map((b) => b.type)).toEqual(["text"]);
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage.output_tokens).toBe(6);
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(3);
  });

  test("messages.stream: message_start, ping, blocks, message_delta, message_stop; finalMessage matches the deltas", async () => {
    const stream = client().messages.stream({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }], stop_sequences: ["\u0000never"] });
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalMessage();
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(["message_start", "content_block_start"]);
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    const text = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : [])).join("");
    expect(final.content).toHaveLength(1);
    const block = final.content[0]!;
    if (block.type !== "text") throw new Error(`expected a text block, got ${block.type}`);
    expect(block.text).toBe(text);
    expect(final.stop_reason).toBe("max_tokens");
    expect(final.usage.output_tokens).toBe(8);
  });

  test("the wire stream has a ping after message_start", async () => {
    const server = fixture.servers[profile];
    const response = await fetch(`${server.baseUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": fixture.keyOf(profile) },
      body: JSON.stringify({ model: MODEL, max_tokens: 2, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const names = [...(await response.text()).matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(names.slice(0, 2)).toEqual(["message_start", "ping"]);
    expect(names.at(-1)).toBe("message_stop");
  });

  test("tool_choice any: a valid tool_use block; a tool_result turn follows it", async () => {
    const message = await client().messages.create({ model: MODEL, max_tokens: 200, messages: ask, tools, tool_choice: { type: "any", disable_parallel_tool_use: true } });
    expect(message.stop_reason).toBe("tool_use");
    const use = expectValidToolUse(message.content.find((b) => b.type === "tool_use"));
    const next = await client().messages.create({
      model: MODEL, max_tokens: 4, tools,
      messages: [...ask, { role: "assistant", content: message.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "21 degrees" }] }] }],
    });
    expect(next.content.length).toBeGreaterThan(0);
    expect(next.usage.input_tokens + (next.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0));
  });

  test("a named tool, streamed: input_json_delta, and finalMessage has a valid tool_use", async () => {
    const stream = client().messages.stream({ model: MODEL, max_tokens: 200, messages: ask, tools, tool_choice: { type: "tool", name: "search" } });
    const deltas: string[] = [];
    stream.on("streamEvent", (event) => {
      if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") deltas.push(event.delta.partial_json);
    });
    const final = await stream.finalMessage();
    const use = expectValidToolUse(final.content.find((b) => b.type === "tool_use"), "search");
    expect(JSON.parse(deltas.join(""))).toEqual(use.input);
    expect(final.stop_reason).toBe("tool_use");
  });

  test("system messages inside messages (Claude Code's): accepted anywhere, their text reaches the prompt", async () => {
    const withSystem: Anthropic.MessageParam[] = [
      { role: "user", content: "hi" },
      { role: "system", content: [{ type: "text", text: "# Environment\ncwd: /work" }] } as never,
      { role: "assistant", content: "hello" },
      { role: "system", content: "Be brief." } as never,
      { role: "user", content: "go on" },
    ];
    const plain = withSystem.filter((m) => (m.role as string) !== "system");
    const counted = await client().messages.countTokens({ model: MODEL, system: "You are an agent", messages: withSystem });
    const without = await client().messages.countTokens({ model: MODEL, system: "You are an agent", messages: plain });
    expect(counted.input_tokens).toBeGreaterThan(without.input_tokens + 8);
    const message = await client().messages.create({ model: MODEL, max_tokens: 2, messages: withSystem });
    expect(message.type).toBe("message");
    const image = await failure(client().messages.create({
      model: MODEL, max_tokens: 2, messages: [{ role: "system", content: [{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: fixture.jpegBase64 } }] } as never, ...ask],
    }));
    expect(expectAnthropicError(image, 400, "invalid_request_error")).toContain("messages.0.content.0.type");
  });

  test("thinking.budget_tokens at or above max_tokens (interleaved thinking, as Qwen Code sends it): the reply ends at max_tokens", async () => {
    const message = await client().messages.create({
      model: fixture.thinkModel, max_tokens: 12, thinking: { type: "enabled", budget_tokens: 12 }, messages: [{ role: "user", content: "Think" }],
    });
    expect(message.usage.output_tokens).toBe(12);
    expect(message.stop_reason).toBe("max_tokens");
    const above = await client().messages.create({
      model: fixture.thinkModel, max_tokens: 6, thinking: { type: "enabled", budget_tokens: 32000 }, messages: [{ role: "user", content: "Think" }],
    });
    expect(above.usage.output_tokens).toBe(6);
    expect(above.content.map((b) => b.type)).toEqual(["thinking"]);
  });

  test("a second turn that repeats the first reports the reused prompt as cache_read_input_tokens", async () => {
    const first = await client().messages.create({ model: MODEL, max_tokens: 3, system: "You are a careful agent", messages: ask });
    const reply = first.content.length ? first.content : [{ type: "text" as const, text: "ok" }];
    const second = await client().messages.create({
      model: MODEL, max_tokens: 3, system: "You are a careful agent", messages: [...ask, { role: "assistant", content: reply as never }, { role: "user", content: "And Oslo?" }],
    });
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(second.id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  test("image blocks: base64 reaches the vision model; a url goes through the guarded fetch", async () => {
    const plain = await client().messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: "user", content: "What is this?" }] });
    const withImage = await client().messages.create({
      model: MODEL, max_tokens: 2,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: fixture.jpegBase64 } }, { type: "text", text: "What is this?" }] }],
    });
    const total = (m: Anthropic.Message) => m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0);
    expect(total(withImage)).toBeGreaterThanOrEqual(total(plain) + 16);
    // A loopback URL is refused by the default fetch policy, in Anthropic's shape.
    const refused = await failure(client().messages.create({
      model: MODEL, max_tokens: 2,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: `http://127.0.0.1:${imageHost.port}/cat.jpg` } }] }],
    }));
    expectAnthropicError(refused, 400, "invalid_request_error");
  });

  test("thinking with budget_tokens: reasoning streams as thinking_delta and stops at the budget", async () => {
    const message = await client().messages.create({
      model: fixture.thinkModel, max_tokens: 30, thinking: { type: "enabled", budget_tokens: 8 }, messages: [{ role: "user", content: "Think" }],
    });
    // Random weights never close <think> themselves: the text block exists because the budget closed it.
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect(message.usage.output_tokens).toBe(30);
    const stream = client().messages.stream({
      model: fixture.thinkModel, max_tokens: 20, thinking: { type: "enabled", budget_tokens: 5 }, messages: [{ role: "user", content: "Think" }],
    });
    const deltas: string[] = [];
    stream.on("streamEvent", (event) => {
      if (event.type === "content_block_delta") deltas.push(event.delta.type);
    });
    const final = await stream.finalMessage();
    expect(deltas.filter((t) => t === "thinking_delta").length).toBeGreaterThan(0);
    expect(deltas.filter((t) => t === "thinking_delta").length).toBeLessThanOrEqual(5);
    expect(deltas.indexOf("text_delta")).toBeGreaterThan(deltas.lastIndexOf("thinking_delta"));
    expect(final.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    // Without thinking the template closes the reasoning: text only.
    const plain = await client().messages.create({ model: fixture.thinkModel, max_tokens: 4, messages: [{ role: "user", content: "Answer" }] });
    expect(plain.content.map((b) => b.type)).toEqual(["text"]);
  });

  test("output_config.format json_schema: the reply is JSON valid against the schema", async () => {
    const message = await client().messages.create({
      model: MODEL, max_tokens: 100, messages: ask, output_config: { format: { type: "json_schema", schema: weather } },
    });
    const block = message.content[0];
    if (block?.type !== "text") throw new Error("expected a text block");
    const value: unknown = JSON.parse(block.text);
    expect(validators.get_weather!(value)).toBe(true);
  });

  test("countTokens counts the prompt the reply reads", async () => {
    const body = { model: MODEL, system: "Be brief", messages: ask, tools };
    const counted = await client().messages.countTokens(body);
    const message = await client().messages.create({ ...body, max_tokens: 1 });
    expect(counted.input_tokens).toBe(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0));
    const withoutTools = await client().messages.countTokens({ model: MODEL, system: "Be brief", messages: ask });
    expect(counted.input_tokens).toBeGreaterThan(withoutTools.input_tokens);
  });

  test("bad input is a 4xx in Anthropic's shape", async () => {
    const noMax = await failure(client().messages.create({ model: MODEL, messages: ask } as never));
    expect(expectAnthropicError(noMax, 400, "invalid_request_error")).toContain("max_tokens");
    const unknownBlock = await failure(client().messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: "user", content: [{ type: "hologram" } as never] }] }));
    expect(expectAnthropicError(unknownBlock, 400, "invalid_request_error")).toContain("hologram");
    const orphan = await failure(client().messages.create({
      model: MODEL, max_tokens: 2, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "1" }] }],
    }));
    expect(expectAnthropicError(orphan, 400, "invalid_request_error")).toContain("toolu_x");
    // beyond the model's trained 4096 tokens (a shorter one grows the context on profiles a and c): nothing is reloaded,
    // and the limit named is the most the server would grow to (b's --ctx-size is vLLM's --max-model-len: a limit)
    const tooLong = await failure(client().messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: "user", content: "word ".repeat(5000) }] }));
    const words = expectAnthropicError(tooLong, 400, "invalid_request_error");
    expect(words).toMatch(new RegExp(`^prompt is too long: \\d+ tokens > ${profile === "b" ? 1023 : 4095} maximum \\(.*trained for`));
    expect(words).not.toMatch(/--ctx-size|--max-model-len|OLLAMA_CONTEXT_LENGTH|num_ctx/);
    if (profile !== "c") {
      // LM Studio answers any model name with the loaded model; the others do not know this one.
      const unknownModel = await failure(client().messages.create({ model: "no-such-model", max_tokens: 2, messages: ask }));
      expectAnthropicError(unknownModel, 404, "not_found_error");
    }
  });
});

describe("API key (profile b runs with --api-key)", () => {
  test("x-api-key and Authorization: Bearer both pass; a wrong key is a 401 authentication_error", async () => {
    const baseURL = fixture.servers.b.baseUrl;
    const viaBearer = new Anthropic({ baseURL, apiKey: null, authToken: KEY, maxRetries: 0 });
    expect((await viaBearer.messages.create({ model: MODEL, max_tokens: 1, messages: ask })).type).toBe("message");
    expect((await clients.b!.messages.countTokens({ model: MODEL, messages: ask })).input_tokens).toBeGreaterThan(0);
    const wrong = new Anthropic({ baseURL, apiKey: "wrong", maxRetries: 0 });
    expectAnthropicError(await failure(wrong.messages.create({ model: MODEL, max_tokens: 1, messages: ask })), 401, "authentication_error");
  });
});
