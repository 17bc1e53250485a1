// Configured MCP servers on /v1/chat/completions (llamux's extension: a {"type": "mcp", "server_label"}
// tools entry) on profiles a, b and c: real `llamux serve` processes with an mcp.json naming the pinned
// server-everything over stdio, the pinned `openai` client. Random weights write nonsense, so the call is
// forced by tool_choice to get-structured-content (its one argument an enum of cities): the checks are
// that the server ran it (the message's mcp_calls carry server-everything's answer for the model's city)
// and that the client gets the model's answer, not a call to run. Refusals: URLs, commands, approvals,
// unknown labels, and a server started without --mcp.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { WEATHER } from "../../fixtures/mcp-servers.ts";
import { CALL_TIMEOUT_S, MODEL, PROFILES, startMcpServers, type McpServers, type Profile } from "../mcp-fixture.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

const WEATHER_TOOL = "get-structured-content";
const everything = (extra: Record<string, unknown> = {}) => ({ type: "mcp", server_label: "everything", allowed_tools: [WEATHER_TOOL], ...extra });
const forceWeather = { type: "function", function: { name: WEATHER_TOOL } } as const;
/**
 * Room for a forced call and a few tokens of answer after its result: the call is at most 105 characters
 * (get-structured-content with "Los Angeles" in a <tool_call> block), about 40 tokens typically.
 */
const CALL_TOKENS = 112;

interface McpCall { type: string; server_label: string; name: string; arguments: string; output: string | null; error: unknown; status: string }

let fixture: McpServers;
let plain: RunningServer;
const clients: Partial<Record<Profile, OpenAI>> = {};

const errorOf = (request: Promise<unknown>): Promise<{ status?: number; message: string; param?: string }> =>
  request.then(() => ({ message: "the request succeeded" }), (error: { status?: number; message: string; param?: string }) => error);

/** The one call the server ran: server-everything's weather for the city the model wrote. */
function expectWeatherCall(calls: McpCall[]): void {
  expect(calls).toHaveLength(1);
  const [call] = calls;
  expect(call!.type).toBe("mcp_call");
  expect(call!.server_label).toBe("everything");
  expect(call!.name).toBe(WEATHER_TOOL);
  expect(call!.status).toBe("completed");
  expect(call!.error).toBeNull();
  const city = (JSON.parse(call!.arguments) as { location: string }).location;
  expect(Object.keys(WEATHER)).toContain(city);
  expect(call!.output).toBe(WEATHER[city]!);
}

beforeAll(async () => {
  fixture = await startMcpServers();
  for (const profile of PROFILES) {
    clients[profile] = new OpenAI({ baseURL: `${fixture.servers[profile].baseUrl}/v1`, apiKey: fixture.keyOf(profile), maxRetries: 0, timeout: 300_000 });
  }
  plain = await startServer([fixture.modelPath, "--served-model-name", MODEL, "--ctx-size", "1024", "--threads", "2", "--profile", "b"]);
}, 180_000);

afterAll(async () => {
  await fixture?.stop();
  await plain?.stop();
});

describe.each(PROFILES)("profile %s", (profile) => {
  const client = () => clients[profile]!;

  test("a forced call of a configured server's tool runs on the server; the reply is the model's answer and lists the call", async () => {
    const completion = await client().chat.completions.create({
      model: MODEL, messages: [{ role: "user", content: "What is the weather?" }], tools: [everything()] as never, tool_choice: forceWeather,
      max_tokens: CALL_TOKENS, temperature: 0,
    });
    const [choice] = completion.choices;
    expect(choice!.finish_reason).toBeOneOf(["stop", "length"]);
    expect(choice!.message.tool_calls ?? []).toEqual([]);
    expectWeatherCall((choice!.message as unknown as { mcp_calls: McpCall[] }).mcp_calls);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
  });

  test("streamed, the call the server ran arrives in a chunk of its own, then the answer; no tool call is handed to the client", async () => {
    const stream = await client().chat.completions.create({
      model: MODEL, messages: [{ role: "user", content: "What is the weather?" }], tools: [everything()] as never,
      tool_choice: { type: "mcp", server_label: "everything", name: WEATHER_TOOL } as never, max_tokens: CALL_TOKENS, temperature: 0,
      stream: true, stream_options: { include_usage: true },
    });
    const finishes: string[] = [];
    const calls: McpCall[] = [];
    let toolDeltas = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta.tool_calls) toolDeltas++;
        calls.push(...((choice.delta as { mcp_calls?: McpCall[] }).mcp_calls ?? []));
        if (choice.finish_reason) finishes.push(choice.finish_reason);
      }
    }
    expect(toolDeltas).toBe(0);
    expectWeatherCall(calls);
    expect(finishes).toHaveLength(1);
    expect(finishes[0]).toBeOneOf(["stop", "length"]);
    // The forced call's tokens and the answer's are both counted.
    expect(usage!.completion_tokens).toBeGreaterThan(0);
  });
});

test("a server that hangs: the call fails at --mcp-call-timeout with a clear mcp_calls error, and the reply completes (profile b)", async () => {
  const completion = await clients.b!.chat.completions.create({
    model: MODEL, messages: [{ role: "user", content: "x" }], tools: [{ type: "mcp", server_label: "bad", allowed_tools: ["hang"] }] as never,
    tool_choice: { type: "mcp", server_label: "bad", name: "hang" } as never, max_tokens: CALL_TOKENS, temperature: 0,
  });
  const [call] = (completion.choices[0]!.message as unknown as { mcp_calls: McpCall[] }).mcp_calls;
  expect(call!.status).toBe("failed");
  expect(call!.output).toBeNull();
  expect(call!.error).toEqual({ type: "mcp_protocol_error", code: -32001, message: `MCP server "bad" did not run "hang" within ${CALL_TIMEOUT_S} s` });
  expect(completion.choices[0]!.finish_reason).toBeOneOf(["stop", "length"]);
});

describe("refusals (profile b)", () => {
  const client = () => clients.b!;
  const ask = (tools: unknown[]) => errorOf(client().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hi" }], tools: tools as never, max_tokens: 4 }));

  test("a server_url, a command, an approval rule, an unknown label", async () => {
    const url = await ask([{ type: "mcp", server_label: "x", server_url: fixture.http.url }]);
    expect(url.status).toBe(400);
    expect(url.message).toContain("only MCP servers of mcp.json");
    expect(url.param).toBe("tools[0].server_url");
    const command = await ask([{ type: "function", function: { name: "f" } }, { type: "mcp", server_label: "x", command: "/bin/sh" }]);
    expect(command.status).toBe(400);
    expect(command.param).toBe("tools[1].command");
    const approval = await ask([everything({ require_approval: "always" })]);
    expect(approval.status).toBe(400);
    expect(approval.param).toBe("tools[0].require_approval");
    const unknown = await ask([{ type: "mcp", server_label: "nowhere" }]);
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('No MCP server "nowhere" is configured');
    const several = await errorOf(client().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hi" }], tools: [everything()] as never, n: 2, max_tokens: 4 }));
    expect(several.status).toBe(400);
    expect(several.param).toBe("n");
  });

  test("a server started without --mcp runs no MCP server", async () => {
    const bare = new OpenAI({ baseURL: `${plain.baseUrl}/v1`, apiKey: "none", maxRetries: 0 });
    const error = await errorOf(bare.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hi" }], tools: [everything()] as never, max_tokens: 4 }));
    expect(error.status).toBe(400);
    expect(error.message).toContain("start it with --mcp");
  });
});
