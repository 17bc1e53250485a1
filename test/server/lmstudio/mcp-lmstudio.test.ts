// LM Studio's /api/v1/chat `integrations` end to end on profile c: a real `llamux serve`, real MCP servers
// (server-everything over stdio as a configured plugin "mcp/everything", and over Streamable HTTP as an
// ephemeral_mcp), plain HTTP as LM Studio's clients speak it. The model has random weights, so the call is
// forced (tool_choice "required", llamux's extension) to a tool whose one argument is an enum.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { everythingEntry, WEATHER } from "../../fixtures/mcp-servers.ts";
import { MODEL, startMcpServers, type McpServers } from "../mcp-fixture.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

const WEATHER_TOOL = "get-structured-content";
/**
 * Room for a forced call and a few tokens of answer after its result: the first call is at most 105 characters
 * (get-structured-content with "Los Angeles" in a <tool_call> block), about 40 tokens typically.
 */
const CALL_TOKENS = 112;

let fixture: McpServers;
type Json = Record<string, any>;

async function chat(server: RunningServer, body: Json): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${server.baseUrl}/api/v1/chat`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, ...body }),
  });
  return { status: response.status, json: await response.json() as Json };
}

/** The named SSE events of a streamed chat, in order. */
async function chatEvents(server: RunningServer, body: Json): Promise<Array<{ event: string; data: Json }>> {
  const response = await fetch(`${server.baseUrl}/api/v1/chat`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, stream: true, ...body }),
  });
  expect(response.status).toBe(200);
  const events: Array<{ event: string; data: Json }> = [];
  for (const block of (await response.text()).split("\n\n")) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event && data) events.push({ event, data: JSON.parse(data) as Json });
  }
  return events;
}

function expectWeatherCall(item: Json, providerInfo: Json): void {
  expect(item.type).toBe("tool_call");
  expect(item.tool).toBe(WEATHER_TOOL);
  expect(Object.keys(WEATHER)).toContain(item.arguments.location);
  expect(item.output).toBe(WEATHER[item.arguments.location]!);
  expect(item.provider_info).toEqual(providerInfo);
}

beforeAll(async () => {
  fixture = await startMcpServers(["c"]);
}, 180_000);

afterAll(async () => {
  await fixture?.stop();
});

describe("integrations on /api/v1/chat", () => {
  const server = () => fixture.servers.c;

  test("a configured plugin: the call runs and its tool_call item carries the server's answer", async () => {
    const { status, json } = await chat(server(), {
      input: "What is the weather?", integrations: [{ type: "plugin", id: "mcp/everything", allowed_tools: [WEATHER_TOOL] }],
      tool_choice: "required", max_output_tokens: CALL_TOKENS, temperature: 0,
    });
    expect(status).toBe(200);
    const calls = (json.output as Json[]).filter((item) => item.type === "tool_call");
    expect(calls).toHaveLength(1);
    expectWeatherCall(calls[0]!, { type: "plugin", plugin_id: "mcp/everything" });
    expect(json.output.at(-1).type).toBe("message");
    expect(json.stats.total_output_tokens).toBeGreaterThan(0);
    expect(json.response_id).toMatch(/^resp_/);
  });

  test("streamed, with an ephemeral_mcp over Streamable HTTP: tool_call.start, .arguments, .success, and chat.end with the item", async () => {
    const events = await chatEvents(server(), {
      input: "What is the weather?", tool_choice: "required", max_output_tokens: CALL_TOKENS, temperature: 0,
      integrations: [{ type: "ephemeral_mcp", server_label: "remote", server_url: fixture.http.url, allowed_tools: [WEATHER_TOOL] }],
    });
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("chat.start");
    expect(names.at(-1)).toBe("chat.end");
    const start = names.indexOf("tool_call.start");
    expect(names.slice(start, start + 3)).toEqual(["tool_call.start", "tool_call.arguments", "tool_call.success"]);
    const provider = { type: "ephemeral_mcp", server_label: "remote" };
    expect(events[start]!.data).toEqual({ type: "tool_call.start", tool: WEATHER_TOOL, provider_info: provider });
    const success = events[start + 2]!.data;
    expectWeatherCall({ ...success, type: "tool_call" }, provider);
    const result = events.at(-1)!.data.result as Json;
    const item = (result.output as Json[]).find((i) => i.type === "tool_call")!;
    expectWeatherCall(item, provider);
    expect(item.arguments).toEqual(success.arguments);
  });

  test("a failing tool: tool_call.failure, and the item's output is the error the model read", async () => {
    const events = await chatEvents(server(), {
      input: "x", tool_choice: "required", max_output_tokens: CALL_TOKENS, temperature: 0, integrations: [{ type: "plugin", id: "mcp/bad", allowed_tools: ["fail"] }],
    });
    const failure = events.find((e) => e.event === "tool_call.failure")!.data;
    expect(failure.reason).toBe("the tool failed on purpose");
    expect(failure.metadata).toMatchObject({ type: "tool_error", tool_name: "fail" });
    const item = (events.at(-1)!.data.result.output as Json[]).find((i) => i.type === "tool_call")!;
    expect(item.output).toBe("Error: the tool failed on purpose");
  });

  test("refusals: a command, a plugin that is not an MCP server, an unknown server, no tools to require", async () => {
    const refused = async (body: Json, text: string) => {
      const { status, json } = await chat(server(), { input: "x", max_output_tokens: 2, ...body });
      expect(status).toBe(400);
      expect(json.error.message).toContain(text);
    };
    await refused({ integrations: [{ type: "ephemeral_mcp", server_label: "evil", command: "rm", args: ["-rf", "/"] }] }, "cannot name a command");
    await refused({ integrations: ["lmstudio/js-code-sandbox"] }, 'a plugin id is "mcp/NAME"');
    await refused({ integrations: ["mcp/nope"] }, 'No MCP server "nope" is configured (configured: everything, files, bad)');
    await refused({ integrations: [{ type: "hosted" }] }, "Unknown integration type");
    await refused({ tool_choice: "required" }, 'tool_choice "required" needs an integration');
  });
});

describe("the flags", () => {
  let home: string;
  let plain: RunningServer;
  let withMcp: RunningServer;
  let urlsOnly: RunningServer;

  beforeAll(async () => {
    // LM Studio's own mcp.json, as LM Studio writes it, in a home directory of its own.
    home = mkdtempSync(join(tmpdir(), "llamux-mcp-home-"));
    mkdirSync(join(home, ".lmstudio"));
    writeFileSync(join(home, ".lmstudio", "mcp.json"), JSON.stringify({ mcpServers: { everything: everythingEntry() } }, null, 2));
    const args = [fixture.modelPath, "--served-model-name", MODEL, "--threads", "2", "--profile", "c"];
    [plain, withMcp, urlsOnly] = await Promise.all([
      startServer(args, { HOME: home }),
      startServer([...args, "--mcp"], { HOME: home }),
      startServer([...args, "--allow-request-mcp"], { HOME: home }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([plain?.stop(), withMcp?.stop(), urlsOnly?.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  const ask = (server: RunningServer, integrations: unknown[]) => chat(server, { input: "x", max_output_tokens: 2, integrations });

  test("off by default: LM Studio's mcp.json is not read without --mcp, and the error says how to turn it on", async () => {
    const { status, json } = await ask(plain, ["mcp/everything"]);
    expect(status).toBe(400);
    expect(json.error.message).toContain("this server runs none: start it with --mcp");
  });

  test("with --mcp, profile c reads ~/.lmstudio/mcp.json unchanged", async () => {
    const { status, json } = await ask(withMcp, ["mcp/nope"]);
    expect(status).toBe(400);
    expect(json.error.message).toContain("(configured: everything)");
  });

  test("an ephemeral_mcp without --allow-request-mcp, and a loopback one without --allow-private-mcp-urls, are 400s", async () => {
    const remote = { type: "ephemeral_mcp", server_label: "remote", server_url: fixture.http.url };
    const withoutFlag = await ask(plain, [remote]);
    expect(withoutFlag.status).toBe(400);
    expect(withoutFlag.json.error.message).toContain("--allow-request-mcp");
    const privateUrl = await ask(urlsOnly, [remote]);
    expect(privateUrl.status).toBe(400);
    expect(privateUrl.json.error.message).toContain("a loopback, private or link-local address");
  });
});
