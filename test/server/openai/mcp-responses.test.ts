// The Responses API's remote MCP tools end to end on profiles a, b and c: real `llamux serve` processes,
// the pinned `openai` client, real MCP servers (server-everything over stdio and Streamable HTTP,
// server-filesystem over stdio, a misbehaving server). Random weights write nonsense, so every call is
// forced by tool_choice (a grammar) to a tool whose only argument is an enum (so the call closes): the
// checks are the items' structure, the event order, and that each mcp_call's output is exactly what the
// MCP server answered for the arguments the model wrote.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { WEATHER } from "../../fixtures/mcp-servers.ts";
import { CALL_TIMEOUT_S, MODEL, PROFILES, startMcpServers, type McpServers, type Profile } from "../mcp-fixture.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let fixture: McpServers;
const clients: Partial<Record<Profile, OpenAI>> = {};

type Item = OpenAI.Responses.ResponseOutputItem;
type McpCall = Extract<Item, { type: "mcp_call" }>;
type McpList = Extract<Item, { type: "mcp_list_tools" }>;

const WEATHER_TOOL = "get-structured-content";
const everything = (extra: Partial<OpenAI.Responses.Tool.Mcp> = {}): OpenAI.Responses.Tool.Mcp =>
  ({ type: "mcp", server_label: "everything", allowed_tools: [WEATHER_TOOL], require_approval: "never", ...extra });
const forceWeather = { type: "mcp", server_label: "everything", name: WEATHER_TOOL } as const;
/**
 * Room for a forced call and a few tokens of answer after its result: the call is at most 105 characters
 * (get-structured-content with "Los Angeles" in a <tool_call> block), about 40 tokens typically.
 */
const CALL_TOKENS = 112;

/** The error a request fails with (the client's promise is not a plain Promise, so `rejects` misreads it). */
const errorOf = (request: Promise<unknown>): Promise<{ status?: number; message: string }> =>
  request.then(() => ({ message: "the request succeeded" }), (error: { status?: number; message: string }) => error);

function only<T extends Item["type"]>(output: Item[], type: T): Extract<Item, { type: T }> {
  const found = output.filter((item) => item.type === type);
  if (found.length !== 1) throw new Error(`expected one ${type} item, got ${JSON.stringify(output.map((i) => i.type))}`);
  return found[0] as Extract<Item, { type: T }>;
}

/** The call's output is the weather server-everything gives for the city the model chose. */
function expectWeather(call: McpCall, label = "everything"): void {
  expect(call.server_label).toBe(label);
  expect(call.name).toBe(WEATHER_TOOL);
  expect(call.id).toMatch(/^mcp_[0-9a-f]{32}$/);
  expect(call.error ?? null).toBeNull();
  expect(call.status).toBe("completed");
  const args = JSON.parse(call.arguments) as { location: string };
  expect(Object.keys(WEATHER)).toContain(args.location);
  expect(call.output).toBe(WEATHER[args.location]!);
}

beforeAll(async () => {
  fixture = await startMcpServers();
  for (const profile of PROFILES) {
    clients[profile] = new OpenAI({ baseURL: `${fixture.servers[profile].baseUrl}/v1`, apiKey: fixture.keyOf(profile), maxRetries: 0, timeout: 300_000 });
  }
}, 180_000);

afterAll(async () => {
  await fixture?.stop();
});

describe.each(PROFILES)("profile %s", (profile) => {
  const client = () => clients[profile]!;

  test("a forced call to a configured stdio server: mcp_list_tools, then an mcp_call whose output is the server's answer", async () => {
    const response = await client().responses.create({
      model: MODEL, input: "What is the weather?", tools: [everything({ allowed_tools: [WEATHER_TOOL, "echo"] })], tool_choice: forceWeather,
      max_output_tokens: CALL_TOKENS, temperature: 0,
    });
    const list = response.output[0] as McpList;
    expect(list.type).toBe("mcp_list_tools");
    expect(list.id).toMatch(/^mcpl_[0-9a-f]{32}$/);
    expect(list.server_label).toBe("everything");
    expect(list.tools.map((t) => t.name).sort()).toEqual(["echo", WEATHER_TOOL]);
    expect(list.tools.find((t) => t.name === WEATHER_TOOL)!.input_schema).toMatchObject({ type: "object", required: ["location"] });
    expectWeather(only(response.output, "mcp_call"));
    expect(response.output.findIndex((i) => i.type === "mcp_call")).toBe(1);
    expect(response.output.some((i) => i.type === "function_call")).toBe(false);
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
    expect(response.usage!.input_tokens).toBeGreaterThan(0);
  });

  test("streamed: OpenAI's MCP events in order, and the final mcp_call carries the server's answer", async () => {
    const stream = client().responses.stream({
      model: MODEL, input: "What is the weather?", tools: [everything()], tool_choice: forceWeather, max_output_tokens: CALL_TOKENS, temperature: 0,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 6)).toEqual([
      "response.created", "response.in_progress", "response.output_item.added",
      "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed", "response.output_item.done",
    ]);
    const callStart = types.indexOf("response.mcp_call.in_progress");
    expect(types[callStart - 1]).toBe("response.output_item.added");
    const callEvents = types.slice(callStart, types.indexOf("response.mcp_call.completed") + 2).filter((t) => t !== "response.mcp_call_arguments.delta");
    expect(callEvents).toEqual(["response.mcp_call.in_progress", "response.mcp_call_arguments.done", "response.mcp_call.completed", "response.output_item.done"]);
    const deltas = events.flatMap((e) => (e.type === "response.mcp_call_arguments.delta" ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(0);
    const done = events.find((e) => e.type === "response.mcp_call_arguments.done") as OpenAI.Responses.ResponseMcpCallArgumentsDoneEvent;
    expect(JSON.parse(deltas.join(""))).toEqual(JSON.parse(done.arguments));
    const call = only(final.output, "mcp_call");
    expectWeather(call);
    expect(call.arguments).toBe(done.arguments);
    expect(["response.completed", "response.incomplete"]).toContain(types.at(-1)!);
  });

  test("approval round trip: an mcp_approval_request, then mcp_approval_response with previous_response_id runs the call", async () => {
    const tools = [everything({ require_approval: "always" })];
    const first = await client().responses.create({ model: MODEL, input: "What is the weather?", tools, tool_choice: forceWeather, max_output_tokens: CALL_TOKENS, temperature: 0 });
    expect(first.status).toBe("completed");
    expect(first.output.some((i) => i.type === "mcp_call")).toBe(false);
    const request = only(first.output, "mcp_approval_request");
    expect(request.id).toMatch(/^mcpr_[0-9a-f]{32}$/);
    expect(request.server_label).toBe("everything");
    expect(request.name).toBe(WEATHER_TOOL);
    // The request item passed back with other arguments changes nothing: the stored request is approved.
    const elsewhere = Object.keys(WEATHER).find((city) => city !== (JSON.parse(request.arguments) as { location: string }).location)!;
    const second = await client().responses.create({
      model: MODEL, tools, previous_response_id: first.id, max_output_tokens: 4,
      input: [
        { type: "mcp_approval_request", id: request.id, server_label: "everything", name: WEATHER_TOOL, arguments: JSON.stringify({ location: elsewhere }) },
        { type: "mcp_approval_response", approval_request_id: request.id, approve: true },
      ],
    });
    const call = only(second.output, "mcp_call");
    expectWeather(call);
    expect(call.approval_request_id).toBe(request.id);
    expect(call.arguments).toBe(request.arguments);
    // An approval request the client wrote itself approves nothing, with or without a previous response.
    for (const previous of [{}, { previous_response_id: first.id }]) {
      const forged = await errorOf(client().responses.create({
        model: MODEL, tools, max_output_tokens: 2, ...previous,
        input: [
          { type: "mcp_approval_request", id: "mcpr_forged", server_label: "everything", name: WEATHER_TOOL, arguments: JSON.stringify({ location: "Chicago" }) },
          { type: "mcp_approval_response", approval_request_id: "mcpr_forged", approve: true },
        ],
      }));
      expect(forged.status).toBe(400);
      expect(forged.message).toContain('No MCP approval request "mcpr_forged" is waiting');
    }
    // Declined: no call runs.
    const declined = await client().responses.create({
      model: MODEL, tools, previous_response_id: first.id, max_output_tokens: 2,
      input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: false }],
    });
    expect(declined.output.some((i) => i.type === "mcp_call")).toBe(false);
    // An approval nobody asked for is a 400.
    const unknown = await errorOf(client().responses.create({
      model: MODEL, tools, max_output_tokens: 2, input: [{ type: "mcp_approval_response", approval_request_id: "mcpr_nope", approve: true }],
    }));
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('No MCP approval request "mcpr_nope" is waiting');
  });

  test("allowed_tools: only the allowed tools are listed, and forcing another is a 400", async () => {
    const response = await client().responses.create({
      model: MODEL, input: "hi", tools: [everything({ allowed_tools: { tool_names: ["echo"] } })], tool_choice: "none", max_output_tokens: 2,
    });
    expect(only(response.output, "mcp_list_tools").tools.map((t) => t.name)).toEqual(["echo"]);
    const refused = await errorOf(client().responses.create({
      model: MODEL, input: "hi", tools: [everything({ allowed_tools: ["echo"] })], tool_choice: forceWeather, max_output_tokens: 2,
    }));
    expect(refused.status).toBe(400);
    expect(refused.message).toContain(`tool_choice names tool "${WEATHER_TOOL}", which MCP server "everything" does not offer`);
  });
});

describe("profile a: more servers and the misbehaving one", () => {
  const client = () => clients.a!;
  const bad = (tool: string): OpenAI.Responses.Tool.Mcp => ({ type: "mcp", server_label: "bad", allowed_tools: [tool], require_approval: "never" });

  test("a server named by URL over Streamable HTTP (with --allow-request-mcp and --allow-private-mcp-urls)", async () => {
    const response = await client().responses.create({
      model: MODEL, input: "What is the weather?", max_output_tokens: CALL_TOKENS, temperature: 0,
      tools: [{ type: "mcp", server_label: "remote", server_url: fixture.http.url, allowed_tools: [WEATHER_TOOL], require_approval: "never" }],
      tool_choice: { type: "mcp", server_label: "remote", name: WEATHER_TOOL },
    });
    expectWeather(only(response.output, "mcp_call"), "remote");
  });

  test("server-filesystem over stdio on a temporary directory", async () => {
    const response = await client().responses.create({
      model: MODEL, input: "Which directories?", max_output_tokens: CALL_TOKENS, temperature: 0,
      tools: [{ type: "mcp", server_label: "files", allowed_tools: ["list_allowed_directories"], require_approval: "never" }],
      tool_choice: { type: "mcp", server_label: "files", name: "list_allowed_directories" },
    });
    const call = only(response.output, "mcp_call");
    expect(call.status).toBe("completed");
    expect(call.output).toContain(fixture.filesDir);
  });

  test("a server that hangs: the call fails at --mcp-call-timeout with a clear mcp_call error, and the response completes", async () => {
    const stream = client().responses.stream({
      model: MODEL, input: "x", tools: [bad("hang")], tool_choice: { type: "mcp", server_label: "bad", name: "hang" }, max_output_tokens: CALL_TOKENS, temperature: 0,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    const call = only(final.output, "mcp_call");
    expect(call.status).toBe("failed");
    expect(call.output ?? null).toBeNull();
    expect(call.error).toEqual({ type: "mcp_protocol_error", code: -32001, message: `MCP server "bad" did not run "hang" within ${CALL_TIMEOUT_S} s` });
    expect(types).toContain("response.mcp_call.failed");
    expect(types.at(-1)).toMatch(/^response\.(completed|incomplete)$/);
  });

  const forced = (tool: string) => client().responses.create({
    model: MODEL, input: "x", tools: [bad(tool)], tool_choice: { type: "mcp", server_label: "bad", name: tool }, max_output_tokens: CALL_TOKENS, temperature: 0,
  });

  test("a server that crashes mid-call: a failed mcp_call", async () => {
    const crashed = await forced("crash");
    const call = only(crashed.output, "mcp_call");
    expect(call.status).toBe("failed");
    expect(call.error).toMatchObject({ type: "mcp_protocol_error", code: -32000 });
    expect((call.error as { message: string }).message).toContain("closed the connection");
  });

  test("after the crash the next request starts the server afresh; a tool's own error is an mcp_tool_execution_error", async () => {
    const failing = await forced("fail");
    expect(only(failing.output, "mcp_call").error).toMatchObject({ type: "mcp_tool_execution_error", content: [{ type: "text", text: "the tool failed on purpose" }] });
  });

  test("a result larger than the bound reaches the model cut, with a note", async () => {
    const response = await client().responses.create({
      model: MODEL, input: "x", tools: [bad("flood")], tool_choice: { type: "mcp", server_label: "bad", name: "flood" }, max_output_tokens: CALL_TOKENS, temperature: 0,
    });
    const output = only(response.output, "mcp_call").output!;
    expect(output).toStartWith("x".repeat(16_384));
    expect(output).toEndWith("[result truncated: 83616 more characters not shown]");
  });

  test("a server that writes 400,000 log notifications: past the rate they are dropped unread (the log says so), and the call answers", async () => {
    let calling = true;
    const statuses: number[] = [];
    const pings = (async () => {
      while (calling) {
        statuses.push((await fetch(`${fixture.servers.a.baseUrl}/api/version`)).status);
        await Bun.sleep(20);
      }
    })();
    const response = await forced("notify").finally(() => {
      calling = false;
    });
    await pings;
    expect(only(response.output, "mcp_call")).toMatchObject({ status: "completed", output: "notified" });
    await fixture.servers.a.logged(/MCP server "bad" sends more than 100 notifications a second: the rest are dropped/);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200)).toBe(true);
  });

  test("refusals: a command in a request, an unknown label, a request that names no label", async () => {
    const create = (tool: Record<string, unknown>) => errorOf(client().responses.create({ model: MODEL, input: "x", tools: [tool as unknown as OpenAI.Responses.Tool], max_output_tokens: 2 }));
    const command = await create({ type: "mcp", server_label: "evil", command: "rm", args: ["-rf", "/"] });
    expect(command.status).toBe(400);
    expect(command.message).toContain("cannot name a command");
    const unknown = await create({ type: "mcp", server_label: "nope" });
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('No MCP server "nope" is configured');
    const unlabelled = await create({ type: "mcp", server_url: fixture.http.url });
    expect(unlabelled.status).toBe(400);
    expect(unlabelled.message).toContain("server_label");
  });
});

describe("the flags that guard servers named by URL", () => {
  let plain: RunningServer;
  let urlsOnly: RunningServer;

  beforeAll(async () => {
    plain = await startServer([fixture.modelPath, "--served-model-name", MODEL, "--threads", "2"]);
    urlsOnly = await startServer([fixture.modelPath, "--served-model-name", MODEL, "--threads", "2", "--allow-request-mcp"]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([plain?.stop(), urlsOnly?.stop()]);
  });

  const remote = (): OpenAI.Responses.Tool.Mcp => ({ type: "mcp", server_label: "remote", server_url: fixture.http.url, require_approval: "never" });
  const clientOf = (server: RunningServer) => new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "x", maxRetries: 0 });

  test("without --allow-request-mcp a server_url is a 400 naming the flag", async () => {
    const refused = await errorOf(clientOf(plain).responses.create({ model: MODEL, input: "x", tools: [remote()], max_output_tokens: 2 }));
    expect(refused.status).toBe(400);
    expect(refused.message).toContain("--allow-request-mcp");
  });

  test("with --allow-request-mcp but not --allow-private-mcp-urls a loopback server_url is a 400 naming the address", async () => {
    const refused = await errorOf(clientOf(urlsOnly).responses.create({ model: MODEL, input: "x", tools: [remote()], max_output_tokens: 2 }));
    expect(refused.status).toBe(400);
    expect(refused.message).toContain("resolves to 127.0.0.1, a loopback, private or link-local address");
  });

  test("--api-key covers the routes that run tools", async () => {
    const response = await fetch(`${fixture.servers.b.baseUrl}/v1/responses`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: "x", tools: [{ type: "mcp", server_label: "everything", require_approval: "never" }] }),
    });
    expect(response.status).toBe(401);
  });
});
