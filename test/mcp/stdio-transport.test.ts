// The stdio transport of configured MCP servers against the misbehaving fixture server, through the
// official SDK's Client: a flood of log notifications is cut to the rate (the rest dropped unread), a line
// over the bound is reported as such, and close() ends even a server that ignores stdin's end and SIGTERM.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { McpMessageTooLargeError } from "../../src/mcp/message-too-large.ts";
import { StdioTransport, type StdioTransportOptions } from "../../src/mcp/stdio-transport.ts";
import { misbehavingEntry, NOTIFICATIONS } from "../fixtures/mcp-servers.ts";
import { processAlive } from "../fixtures/child-processes.ts";

/** Processes a test started: killed after it whatever happened. */
const started: number[] = [];

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
});

function transport(extra: Partial<StdioTransportOptions> = {}, ...flags: string[]): StdioTransport {
  const entry = misbehavingEntry(...flags);
  return new StdioTransport({
    name: "bad", command: entry.command, args: entry.args, env: getDefaultEnvironment(),
    maxLineBytes: 4 * 1024 * 1024, notificationsPerSecond: 100, closeGraceMs: 2000, ...extra,
  });
}

async function connected(stdio: StdioTransport): Promise<Client> {
  const client = new Client({ name: "test", version: "1" });
  await client.connect(stdio);
  started.push(stdio.pid!);
  return client;
}


test("400,000 log notifications: a few are read, the rest dropped unread, and the call still answers", async () => {
  let dropping = 0;
  const stdio = transport({ onDropping: () => dropping++ });
  const client = await connected(stdio);
  let read = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
    read++;
  });
  try {
    const result = await client.callTool({ name: "notify", arguments: { choice: "a" } });
    expect(result.content).toEqual([{ type: "text", text: "notified" }]);
    await Bun.sleep(0);
    expect(read + stdio.droppedNotifications).toBe(NOTIFICATIONS);
    expect(read).toBeLessThan(NOTIFICATIONS / 100);
    expect(dropping).toBe(1);
  } finally {
    await client.close();
  }
});

test("a line over the bound is reported as too large and ends the session", async () => {
  const errors: McpMessageTooLargeError[] = [];
  const stdio = transport({ onTooLarge: (error) => errors.push(error) });
  const client = await connected(stdio);
  const closed = new Promise<void>((resolve) => {
    client.onclose = resolve;
  });
  const call = client.callTool({ name: "huge", arguments: { choice: "a" } }).catch((error: Error) => error);
  await closed;
  expect(errors.map((e) => e.message)).toEqual(['MCP server "bad" sent more than 4 MiB in one message (the bound on one message)']);
  expect(await call).toBeInstanceOf(Error);
});

test("close() ends a server at stdin's end; one that ignores it and SIGTERM gets SIGKILL", async () => {
  const polite = transport();
  const politeClient = await connected(polite);
  const politePid = polite.pid!;
  await politeClient.close();
  expect(processAlive(politePid)).toBe(false);

  const dir = mkdtempSync(join(tmpdir(), "llamux-stubborn-"));
  try {
    const pidFile = join(dir, "pid");
    const stubborn = transport({ closeGraceMs: 300 }, "--stubborn", "--pid-file", pidFile);
    const client = await connected(stubborn);
    await client.listTools();
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pid).toBe(stubborn.pid!);
    await client.close();
    expect(processAlive(pid)).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
