// A Conversation that registers a real MCP server (the pinned server-everything over stdio) and runs its
// tools itself, in process (ModelRunner) and against a `llamux serve` (RemoteModelRunner), on the tiny
// LFM2 model. Random weights write nonsense, so each call is forced by toolChoice (a grammar) to
// get-structured-content, whose one argument is an enum of cities (the call always closes): the checks
// are that the result the model reads is what the server answered for the city it wrote, and the history.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  Complete, Conversation, FunctionCalls, GenerationError, McpServerError, McpToolResult, ModelRunner, RemoteModelRunner,
  type MessageResponse,
} from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { everythingEntry, misbehavingEntry, startEverythingHttp, WEATHER, type HttpMcpServer } from "../fixtures/mcp-servers.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { collect, weatherFunction } from "./tool-flow.ts";

const WEATHER_TOOL = "get-structured-content";
// The call is at most 85 characters (location="Los Angeles" in LFM2's syntax); the answer after its result takes the rest.
const forceWeather = { toolChoice: { name: WEATHER_TOOL }, maxTokens: 96, temperature: 0 } as const;

let local: ModelRunner;
let server: RunningServer;
let remote: RemoteModelRunner;
let http: HttpMcpServer;
const open: Conversation[] = [];

beforeAll(async () => {
  const model = await ensureModel("tiny-lfm2");
  local = await ModelRunner.load(model, { contextSize: 1024, parallel: 1 });
  server = await startServer([model, "--profile", "b", "--served-model-name", "tiny-lfm2", "--max-model-len", "1024"]);
  remote = new RemoteModelRunner({ baseURL: `${server.baseUrl}/v1`, model: "tiny-lfm2" });
  http = await startEverythingHttp();
}, 180_000);

afterAll(async () => {
  await Promise.all(open.map((conversation) => conversation.close()));
  await local?.unload();
  await server?.stop();
  await http?.stop();
});

/** A conversation with server-everything registered (only the weather tool shown, unless told). */
async function withEverything(conversation: Conversation, allowedTools = [WEATHER_TOOL]): Promise<Conversation> {
  open.push(conversation);
  expect(await conversation.registerMcpServer("everything", everythingEntry(), { allowedTools })).toEqual(allowedTools);
  return conversation;
}

const only = <T>(responses: MessageResponse[], type: new (...args: never[]) => T): T[] => responses.filter((r): r is MessageResponse & T => r instanceof type);

/** One McpToolResult whose text is server-everything's weather for the city the model chose. */
function expectWeatherResult(responses: MessageResponse[]): McpToolResult {
  const [result, ...more] = only(responses, McpToolResult);
  expect(more).toEqual([]);
  expect(result!.server).toBe("everything");
  expect(result!.call.name).toBe(WEATHER_TOOL);
  const city = result!.call.arguments.location as string;
  expect(Object.keys(WEATHER)).toContain(city);
  expect(result!.isError).toBe(false);
  expect(result!.result).toBe(WEATHER[city]!);
  return result!;
}

describe.each([
  ["in process", () => local.createConversation("Answer about the weather.")],
  ["against a server", () => remote.createConversation("Answer about the weather.")],
] as const)("%s", (_, create) => {
  test("a forced call of an MCP tool runs on the server, its result goes to the model, and the model answers", async () => {
    const conversation = await withEverything(create());
    const responses = await collect(conversation.generateResponse("What is the weather?", forceWeather, { toolLimits: { maxRounds: 1 } }));
    const result = expectWeatherResult(responses);
    // The program is never asked to run an MCP call.
    expect(only(responses, FunctionCalls)).toEqual([]);
    const complete = responses.at(-1) as Complete;
    expect(complete).toBeInstanceOf(Complete);
    expect(complete.finishReason).toBeOneOf(["stop", "length"]);
    expect(complete.fullMessage.functionCalls ?? []).toEqual([]);
    expect(responses.indexOf(result)).toBeLessThan(responses.length - 1);
    // The history holds the call, its result (answering the call's id) and the answer.
    const history = conversation.history;
    expect(history.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(history[2]!.functionCalls!.map((call) => call.name)).toEqual([WEATHER_TOOL]);
    expect(history[3]!.text).toBe(result.result);
    expect(history[3]!.toolCallId).toBe(history[2]!.functionCalls![0]!.id!);
    expect(history[4]).toBe(complete.fullMessage);
    expect(complete.stats.completionTokens).toBeGreaterThan(0);
    expect(complete.stats.totalTokens).toBe(complete.stats.promptTokens + complete.stats.completionTokens);
  }, 240_000);

  test("a call past the calls-per-turn bound is not run: the model reads an error, the program gets it as an error result", async () => {
    const conversation = await withEverything(create());
    const responses = await collect(conversation.generateResponse("What is the weather?", forceWeather, { toolLimits: { maxRounds: 1, maxCallsPerRound: 0 } }));
    const [result] = only(responses, McpToolResult);
    expect(result!.isError).toBe(true);
    expect(result!.result).toBe("Error: Not run: at most 0 tool calls are run per turn");
    expect(responses.at(-1)).toBeInstanceOf(Complete);
    expect(conversation.history[3]!.text).toBe(result!.result);
  }, 240_000);

  test("a forced call of one of the program's own functions still comes back as FunctionCalls, with MCP tools registered", async () => {
    const conversation = await withEverything(create());
    conversation.registerFunction(weatherFunction);
    // The longest get_weather call the grammar admits is 108 characters (days at 15 digits), +1 end token.
    const responses = await collect(conversation.generateResponse("Weather?", { toolChoice: { name: "get_weather" }, maxTokens: 112, temperature: 0 }));
    expect(only(responses, McpToolResult)).toEqual([]);
    const [calls] = only(responses, FunctionCalls);
    expect(calls!.functionCalls.map((call) => call.name)).toEqual(["get_weather"]);
    expect((responses.at(-1) as Complete).finishReason).toBe("tool_calls");
  }, 240_000);
});

test("a forced choice holds for the first round only: the next round may answer, and the bound on rounds is not reached", async () => {
  const conversation = await withEverything(local.createConversation("Answer about the weather."));
  const responses = await collect(conversation.generateResponse("What is the weather?", forceWeather));
  expectWeatherResult(responses);
  expect((responses.at(-1) as Complete).fullMessage.functionCalls ?? []).toEqual([]);
}, 240_000);

test("a server that hangs or crashes gives the model an error result and the program an McpToolResult with isError; the reply completes", async () => {
  const conversation = local.createConversation();
  open.push(conversation);
  expect(await conversation.registerMcpServer("bad", misbehavingEntry(), { allowedTools: ["hang", "crash"], limits: { callTimeoutMs: 1000 } })).toEqual(["hang", "crash"]);
  const hung = await collect(conversation.generateResponse("x", { toolChoice: { name: "hang" }, maxTokens: 60, temperature: 0 }, { toolLimits: { maxRounds: 1 } }));
  const [timeout] = only(hung, McpToolResult);
  expect(timeout!.isError).toBe(true);
  expect(timeout!.result).toBe('Error: MCP server "bad" did not run "hang" within 1 s');
  expect(hung.at(-1)).toBeInstanceOf(Complete);
  const crashed = await collect(conversation.generateResponse("x", { toolChoice: { name: "crash" }, maxTokens: 60, temperature: 0 }, { toolLimits: { maxRounds: 1 } }));
  const [crash] = only(crashed, McpToolResult);
  expect(crash!.isError).toBe(true);
  expect(crash!.result).toContain('MCP server "bad" closed the connection');
  expect(crashed.at(-1)).toBeInstanceOf(Complete);
}, 120_000);

test("close() ends the sessions and forgets the servers: their tools are gone from the conversation", async () => {
  const conversation = await withEverything(local.createConversation());
  await conversation.close();
  const responses = await collect(conversation.generateResponse("Hi", forceWeather));
  expect((responses[0] as GenerationError).message).toBe(`Cannot force a call of "${WEATHER_TOOL}": no function of that name is registered`);
}, 60_000);

test("server-everything over Streamable HTTP, registered by URL", async () => {
  const conversation = local.createConversation();
  open.push(conversation);
  expect(await conversation.registerMcpServer("everything", { url: http.url }, { allowedTools: [WEATHER_TOOL] })).toEqual([WEATHER_TOOL]);
  const responses = await collect(conversation.generateResponse("What is the weather?", forceWeather, { toolLimits: { maxRounds: 1 } }));
  expectWeatherResult(responses);
  expect(responses.at(-1)).toBeInstanceOf(Complete);
}, 240_000);

test("a tool whose name a registered function has is shown as SERVER_tool", async () => {
  const conversation = local.createConversation();
  open.push(conversation);
  conversation.registerFunction({ name: "echo", description: "the program's own", parameters: [] });
  expect(await conversation.registerMcpServer("everything", everythingEntry(), { allowedTools: ["echo"] })).toEqual(["everything_echo"]);
}, 60_000);

describe("registration failures", () => {
  test("an entry with neither command nor url, a command that does not start, a bad name", async () => {
    const conversation = local.createConversation();
    open.push(conversation);
    await expect(conversation.registerMcpServer("none", {} as never)).rejects.toThrow(McpServerError);
    await expect(conversation.registerMcpServer("none", {} as never)).rejects.toThrow('it needs "command" (a process to spawn) or "url"');
    const missing = conversation.registerMcpServer("missing", { command: "/nonexistent/mcp-server" });
    await expect(missing).rejects.toThrow(McpServerError);
    await expect(missing).rejects.toThrow('MCP server "missing"');
    await expect(conversation.registerMcpServer("bad name", everythingEntry())).rejects.toThrow('a name has 1 to 64 letters, digits, "_", "." or "-"');
  }, 60_000);

  test("forcing an MCP tool that is not registered is an Error response", async () => {
    const conversation = local.createConversation();
    const responses = await collect(conversation.generateResponse("Hi", forceWeather));
    expect(responses).toHaveLength(1);
    expect((responses[0] as GenerationError).message).toBe(`Cannot force a call of "${WEATHER_TOOL}": no function of that name is registered`);
    expect(conversation.history).toEqual([]);
  });
});
