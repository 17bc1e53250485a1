// Configured MCP servers in a Realtime session, as the Responses API runs them: the pinned
// server-everything over stdio named by its mcp.json label in session.update's tools. Random weights write
// nonsense, so each call is forced by tool_choice {"type": "mcp"} to get-structured-content, whose one
// argument is an enum (the call closes); the checks are the events' order and shapes, and that the
// mcp_call's output is what the MCP server answered for the arguments the model wrote.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { McpHub } from "../../../src/mcp/mcp-hub.ts";
import { parseMcpConfig } from "../../../src/mcp/mcp-config.ts";
import { everythingEntry, WEATHER } from "../../fixtures/mcp-servers.ts";
import { connect as connectTo, expectInOrder, startRealtimeServer, type Event, type RealtimeServer } from "./realtime-fixture.ts";

const WEATHER_TOOL = "get-structured-content";
let hub: McpHub;
let server: RealtimeServer;

beforeAll(async () => {
  hub = new McpHub(parseMcpConfig(JSON.stringify({ mcpServers: { everything: everythingEntry() } }), "mcp.json"));
  server = await startRealtimeServer({ mcp: hub });
}, 600_000);

afterAll(async () => {
  await server?.stop();
  await hub?.close();
});

const everything = (extra: Record<string, unknown> = {}) => ({ type: "mcp", server_label: "everything", allowed_tools: [WEATHER_TOOL, "echo"], ...extra });
const forceWeather = { type: "mcp", server_label: "everything", name: WEATHER_TOOL };

/** A text session with server-everything among its tools, whose listing has completed. */
async function sessionWithEverything(tool: Record<string, unknown>) {
  const client = connectTo(server, { model: "assistant" });
  await client.waitFor("session.created");
  client.send({
    type: "session.update",
    session: { type: "realtime", output_modalities: ["text"], temperature: 0, max_output_tokens: 112, audio: { input: { turn_detection: null } }, tools: [tool], tool_choice: forceWeather },
  });
  const updated = await client.waitFor("session.updated");
  const listed = await client.waitFor("conversation.item.done", (e) => (e.item as { type: string }).type === "mcp_list_tools");
  return { client, updated, listed };
}

/** The call's output is the weather server-everything gives for the city the model chose. */
function expectWeather(call: Record<string, any>): void {
  expect(call).toMatchObject({ type: "mcp_call", server_label: "everything", name: WEATHER_TOOL, error: null });
  const args = JSON.parse(call.arguments) as { location: string };
  expect(Object.keys(WEATHER)).toContain(args.location);
  expect(call.output).toBe(WEATHER[args.location]!);
}

describe("MCP servers in a Realtime session", () => {
  test("a configured stdio server: listed when the session names it, then a forced call runs in the reply and the model goes on with its result", async () => {
    const { client, updated, listed } = await sessionWithEverything(everything({ require_approval: "never" }));
    expect((updated.session as Record<string, any>).tools).toEqual([everything({ require_approval: "never" })]);
    const item = listed.item as Record<string, any>;
    expect(item.server_label).toBe("everything");
    expect(item.tools.map((t: { name: string }) => t.name).sort()).toEqual(["echo", WEATHER_TOOL]);
    expect(item.tools.find((t: { name: string }) => t.name === WEATHER_TOOL).input_schema).toMatchObject({ type: "object", required: ["location"] });
    expectInOrder(client.events, ["session.updated", "conversation.item.added", "mcp_list_tools.in_progress", "mcp_list_tools.completed", "conversation.item.done"]);
    const added = client.events.find((e) => e.type === "conversation.item.added")!;
    expect(client.events.find((e) => e.type === "mcp_list_tools.completed")!.item_id).toBe((added.item as { id: string }).id);

    const from = client.events.length;
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "What is the weather?" }] } });
    client.send({ type: "response.create" });
    const done = await client.waitFor("response.done", () => true, from);
    const response = done.response as Record<string, any>;
    expect(client.events.slice(from).filter((e) => e.type === "error")).toEqual([]);
    // a random-weight model answers until max_output_tokens
    expect(response.status === "completed" || response.status_details?.reason === "max_output_tokens").toBe(true);
    const call = response.output[0];
    expectWeather(call);
    expectInOrder(client.events.slice(from), [
      "response.created", "response.output_item.added", "conversation.item.added", "response.mcp_call.in_progress",
      "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done", "response.mcp_call.completed", "response.output_item.done",
    ]);
    const events = (type: string) => client.events.slice(from).filter((e) => e.type === type && e.item_id === call.id);
    expect(events("response.mcp_call_arguments.delta").map((e) => e.delta).join("")).toBe(call.arguments);
    expect(events("response.mcp_call_arguments.done")[0]!.arguments).toBe(call.arguments);
    // the model's answer after the result is a message of the same reply
    if (response.output.length > 1) expect(response.output[1]).toMatchObject({ type: "message", role: "assistant" });
    expect(response.output.length).toBeLessThanOrEqual(2);
    client.close();
  }, 300_000);

  test("a call that needs approval ends the reply with an mcp_approval_request; the client's mcp_approval_response runs it in the next reply", async () => {
    // OpenAI's default: every call waits for approval
    const { client } = await sessionWithEverything(everything());
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "What is the weather?" }] } });
    client.send({ type: "response.create" });
    const first = await client.waitFor("response.done");
    const request = (first.response as Record<string, any>).output[0];
    expect(request).toMatchObject({ type: "mcp_approval_request", server_label: "everything", name: WEATHER_TOOL });
    expect(Object.keys(WEATHER)).toContain(JSON.parse(request.arguments).location);
    expect(client.events.some((e) => e.type === "response.mcp_call.in_progress")).toBe(false);

    // an approval of a request the session never made approves nothing
    client.send({ type: "conversation.item.create", item: { type: "mcp_approval_response", approval_request_id: "item_forged", approve: true } });
    const refused = await client.waitFor("error");
    expect((refused.error as { param: string }).param).toBe("item.approval_request_id");

    const from = client.events.length;
    client.send({ type: "conversation.item.create", item: { type: "mcp_approval_response", approval_request_id: request.id, approve: true } });
    const approval = await client.waitFor("conversation.item.added", () => true, from);
    expect(approval.item).toMatchObject({ type: "mcp_approval_response", approval_request_id: request.id, approve: true });
    client.send({ type: "response.create", response: { tool_choice: "none" } });
    const second = await client.waitFor("response.done", () => true, from);
    const call = (second.response as Record<string, any>).output[0];
    expectWeather(call);
    expect(call.approval_request_id).toBe(request.id);
    expect(call.arguments).toBe(request.arguments);
    client.close();
  }, 300_000);

  test("what a session may not name is an error event naming the tool, and the session keeps its tools", async () => {
    const client = connectTo(server, { model: "assistant" });
    await client.waitFor("session.created");
    const errors = () => client.events.filter((e) => e.type === "error").map((e) => e.error as { message: string; param: string });
    client.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "function", name: "f" }, { type: "mcp", server_label: "nowhere" }] } });
    client.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "mcp", server_label: "remote", server_url: "http://127.0.0.1:9/mcp" }] } });
    client.send({ type: "session.update", session: { type: "realtime", tools: [{ type: "mcp", server_label: "everything", command: "sh" }] } });
    client.send({ type: "response.create", response: { tools: [everything()] } });
    client.send({ type: "session.update", session: { type: "realtime", instructions: "Still here." } });
    const updated = await client.waitFor("session.updated");
    expect((updated.session as { tools: unknown[] }).tools).toEqual([]);
    expect(errors().map((e) => e.param)).toEqual(["session.tools[1].server_label", "session.tools[0].server_url", "session.tools[0].command", "response.tools[0]"]);
    expect(errors()[0]!.message).toContain('No MCP server "nowhere" is configured (configured: everything)');
    expect(errors()[1]!.message).toContain("--allow-request-mcp");
    expect(client.events.some((e: Event) => e.type.startsWith("mcp_list_tools"))).toBe(false);
    client.close();
  }, 60_000);
});
