// SIGTERM to `llamux serve`: every open stream ends with its API's error event (Ollama's NDJSON error
// line, the OpenAI chunk with an error, Anthropic's `error` event, the Responses API's `response.failed`,
// LM Studio's `error` event) before the connection closes, the server exits 0, and a stdio MCP server that
// ignores stdin's end and SIGTERM is killed rather than left running.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { misbehavingEntry } from "../fixtures/mcp-servers.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";
import { processAlive } from "../fixtures/child-processes.ts";

const MODEL = "tiny-shutdown";
/** Long enough that no stream ends before the signal: each stops at its token limit or the context. */
const LONG = 1800;

let dir: string;
let modelPath: string;
/** Processes a test must not leave behind, whatever happens: killed in afterAll. */
const leftovers: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-shutdown-"));
  modelPath = await ensureModel("tiny-llama");
});

afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone, as it should be
    }
  }
  rmSync(dir, { recursive: true, force: true });
});


const serve = (profile: "a" | "c", ...extra: string[]) =>
  startServer([modelPath, "--served-model-name", MODEL, "--profile", profile, "--ctx-size", "2048", "--parallel", "4", "--threads", "2", ...extra]);

/** A streamed request: resolves once `started` shows in its body, with the whole body to come in `body`. */
async function openStream(server: RunningServer, path: string, body: object, started: string): Promise<{ body: Promise<string> }> {
  const response = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(started)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${path} ended before it started: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const rest = async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  };
  return { body: rest() };
}

/** SIGTERM, then the exit status. */
async function terminate(server: RunningServer): Promise<number> {
  process.kill(server.pid, "SIGTERM");
  return server.exited;
}

const user = [{ role: "user", content: "Write a long story" }];

test("profile a: each API's open stream ends with its error event; a stubborn stdio MCP server is killed", async () => {
  const pidFile = join(dir, "stubborn.pid");
  const config = join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { stubborn: misbehavingEntry("--stubborn", "--pid-file", pidFile) } }));
  const server = await serve("a", "--mcp-config", config);
  let mcpPid = 0;
  try {
    // A request that lists the MCP server's tools starts it (and keeps it, as configured servers are kept).
    const listed = await fetch(`${server.baseUrl}/v1/responses`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: "hi", max_output_tokens: 1, tool_choice: "none", tools: [{ type: "mcp", server_label: "stubborn", allowed_tools: ["last"], require_approval: "never" }] }),
    });
    expect(listed.status).toBe(200);
    mcpPid = Number(readFileSync(pidFile, "utf8"));
    leftovers.push(mcpPid);
    expect(processAlive(mcpPid)).toBe(true);

    const streams = await Promise.all([
      openStream(server, "/api/chat", { model: MODEL, messages: user, options: { num_predict: LONG, temperature: 0 } }, '"content"'),
      openStream(server, "/v1/chat/completions", { model: MODEL, messages: user, stream: true, max_tokens: LONG, temperature: 0 }, '"content":"'),
      openStream(server, "/v1/messages", { model: MODEL, messages: user, stream: true, max_tokens: LONG, temperature: 0 }, "content_block_delta"),
      openStream(server, "/v1/responses", { model: MODEL, input: "Write a long story", stream: true, max_output_tokens: LONG, temperature: 0 }, "response.output_text.delta"),
    ]);
    const status = await terminate(server);
    const [ollama, chat, messages, responses] = await Promise.all(streams.map((stream) => stream.body)) as [string, string, string, string];

    const lastLine = JSON.parse(ollama.trimEnd().split("\n").at(-1)!) as { error?: string };
    expect(lastLine.error).toBeString();
    expect(chat).toMatch(/^data: \{"error":\{"message":".+","type":"api_error"/m);
    expect(messages).toMatch(/^event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":".+"\}\}/m);
    expect(responses).toMatch(/^event: response\.failed\ndata: .*"status":"failed"/m);
    expect(status).toBe(0);
    // Closing the MCP session took stdin's end, SIGTERM after the grace period, then SIGKILL.
    expect(processAlive(mcpPid)).toBe(false);
  } finally {
    await server.stop();
  }
}, 120_000);

test("profile c: LM Studio's /api/v1/chat stream ends with its error event", async () => {
  const server = await serve("c");
  try {
    const stream = await openStream(server, "/api/v1/chat", { model: MODEL, input: "Write a long story", stream: true, max_output_tokens: LONG, temperature: 0 }, "message.delta");
    await terminate(server);
    expect(await stream.body).toMatch(/^event: error\ndata: \{"type":"error","error":\{/m);
  } finally {
    await server.stop();
  }
}, 120_000);
