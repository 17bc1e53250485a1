// The MCP client side against real servers: the pinned server-everything over stdio and Streamable HTTP,
// server-filesystem over stdio on a temporary directory, and a misbehaving server built on the official
// SDK (hangs, crashes, garbage, errors). Also mcp.json in Cursor's and LM Studio's format, and the
// refusals of servers a request names by URL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadMcpConfig, McpConfigError, parseMcpConfig } from "../../src/mcp/mcp-config.ts";
import { McpHub, McpRequestError, type McpServerRequest } from "../../src/mcp/mcp-hub.ts";
import { DEFAULT_MCP_LIMITS } from "../../src/mcp/mcp-limits.ts";
import { guardedFetch } from "../../src/mcp/guarded-fetch.ts";
import {
  everythingEntry, filesystemEntry, misbehavingEntry, startEverythingHttp, startMisbehavingHttp, sumText, type HttpMcpServer,
} from "../fixtures/mcp-servers.ts";

let dir: string;
let http: HttpMcpServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-mcp-"));
  writeFileSync(join(dir, "notes.txt"), "hello from the temp dir\n");
  http = await startEverythingHttp();
});

afterAll(async () => {
  await http?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const configured = (name: string, extra: Partial<McpServerRequest> = {}): McpServerRequest => ({ label: name, source: { configured: name }, param: "tools[0]", ...extra });

function hubWith(servers: Record<string, unknown>, policy: Partial<McpHub["policy"]> = {}): McpHub {
  return new McpHub(parseMcpConfig(JSON.stringify({ mcpServers: servers }), "test mcp.json"), {
    allowRequestServers: false, allowPrivateUrls: false, limits: DEFAULT_MCP_LIMITS, ...policy,
  });
}

describe("mcp.json", () => {
  test("Cursor's and LM Studio's format: command servers and url servers, disabled ones left out", () => {
    const config = parseMcpConfig(JSON.stringify({
      mcpServers: {
        everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { A: "1" } },
        huggingface: { url: "https://huggingface.co/mcp", headers: { Authorization: "Bearer x" } },
        legacy: { url: "http://127.0.0.1:9/sse", type: "sse" },
        off: { command: "x", disabled: true },
      },
    }), "mcp.json");
    expect([...config.servers.keys()]).toEqual(["everything", "huggingface", "legacy"]);
    expect(config.servers.get("everything")).toEqual({ kind: "stdio", name: "everything", command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { A: "1" } });
    expect(config.servers.get("huggingface")).toMatchObject({ kind: "http", url: "https://huggingface.co/mcp", headers: { Authorization: "Bearer x" }, sse: false });
    expect(config.servers.get("legacy")).toMatchObject({ kind: "http", sse: true });
  });

  test("an unusable file is an error that names it and says why", () => {
    expect(() => parseMcpConfig("{", "a.json")).toThrow(/Cannot read a\.json: it is not JSON/);
    expect(() => parseMcpConfig('{"mcpServers": {"x": {}}}', "b.json")).toThrow(/server "x" in b\.json: it needs "command"/);
    expect(() => parseMcpConfig('{"mcpServers": {"x": {"url": "ftp://a"}}}', "c.json")).toThrow(McpConfigError);
    expect(() => parseMcpConfig('{"mcpServers": {"a b": {"command": "x"}}}', "d.json")).toThrow(/a name has/);
  });

  test("--mcp-config wins; otherwise ~/.llamux/mcp.json, and on profile c LM Studio's ~/.lmstudio/mcp.json too", () => {
    const home = mkdtempSync(join(tmpdir(), "llamux-mcp-home-"));
    try {
      const env = { HOME: home };
      expect(loadMcpConfig(undefined, true, env).servers.size).toBe(0);
      Bun.spawnSync(["mkdir", "-p", join(home, ".llamux"), join(home, ".lmstudio")]);
      writeFileSync(join(home, ".llamux", "mcp.json"), JSON.stringify({ mcpServers: { shared: { command: "ours" } } }));
      writeFileSync(join(home, ".lmstudio", "mcp.json"), JSON.stringify({ mcpServers: { shared: { command: "theirs" }, studio: { command: "s" } } }));
      expect([...loadMcpConfig(undefined, false, env).servers.keys()]).toEqual(["shared"]);
      const both = loadMcpConfig(undefined, true, env);
      expect([...both.servers.keys()]).toEqual(["shared", "studio"]);
      expect(both.servers.get("shared")).toMatchObject({ command: "ours" });
      const file = join(home, "only.json");
      writeFileSync(file, JSON.stringify({ mcpServers: { only: { command: "o" } } }));
      expect([...loadMcpConfig(file, true, env).servers.keys()]).toEqual(["only"]);
      expect(() => loadMcpConfig(join(home, "missing.json"), true, env)).toThrow(/Cannot read MCP config/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("configured servers over stdio", () => {
  test("server-everything: tools listed, get-sum run, its session reused by the next request", async () => {
    const hub = hubWith({ everything: everythingEntry() });
    try {
      const first = await hub.open([configured("everything")]);
      expect(first.servers[0]).toMatchObject({ label: "everything" });
      const sum = first.tools.find((tool) => tool.name === "get-sum")!;
      expect(sum.definition.function.parameters).toMatchObject({ type: "object", required: ["a", "b"] });
      expect(sum.origin).toEqual({ label: "everything", pluginId: "mcp/everything" });
      expect(await sum.run({ a: 2, b: 40 })).toEqual({ ok: true, output: sumText(2, 40), content: [{ type: "text", text: sumText(2, 40) }] });
      const second = await hub.open([configured("everything")]);
      const again = await second.tools.find((tool) => tool.name === "get-sum")!.run({ a: 1.5, b: -1 });
      expect(again).toMatchObject({ ok: true, output: sumText(1.5, -1) });
    } finally {
      await hub.close();
    }
  });

  test("a configured server's session belongs to the key whose request opened it: another key gets its own", async () => {
    // One session allowed in all: a second owner cannot reuse the first's, so it needs (and is refused) another.
    const hub = hubWith({ everything: everythingEntry() }, { limits: { ...DEFAULT_MCP_LIMITS, maxSessions: 1 } });
    try {
      expect((await hub.open([configured("everything")], [], undefined, "alice")).servers[0]).toMatchObject({ tools: expect.any(Array) });
      expect((await hub.open([configured("everything")], [], undefined, "alice")).servers[0]).toMatchObject({ tools: expect.any(Array) });
      const other = await hub.open([configured("everything")], [], undefined, "bob");
      expect(other.servers[0]).toMatchObject({ failure: { message: expect.stringContaining("Cannot open another MCP session") } });
    } finally {
      await hub.close();
    }
  });

  test("allowed_tools filters by name and by read-only annotation; approval rules mark tools", async () => {
    const hub = hubWith({ everything: everythingEntry() });
    try {
      const named = await hub.open([configured("everything", { allowedTools: { names: ["get-sum", "echo"] }, requireApproval: { never: { names: ["get-sum"] } } })]);
      expect(named.tools.map((t) => t.name).sort()).toEqual(["echo", "get-sum"]);
      expect(named.tools.find((t) => t.name === "get-sum")!.requiresApproval).toBe(false);
      expect(named.tools.find((t) => t.name === "echo")!.requiresApproval).toBe(true);
      const readOnly = await hub.open([configured("everything", { allowedTools: { readOnly: true } })]);
      expect(readOnly.tools.length).toBeGreaterThan(0);
      expect(readOnly.tools.map((t) => t.name)).not.toContain("toggle-simulated-logging");
    } finally {
      await hub.close();
    }
  });

  test("server-filesystem on a temporary directory: its tools read the directory it was given", async () => {
    const hub = hubWith({ files: filesystemEntry(dir) });
    try {
      const toolset = await hub.open([configured("files")]);
      const allowed = await toolset.tools.find((t) => t.name === "list_allowed_directories")!.run({});
      expect(allowed).toMatchObject({ ok: true });
      expect((allowed as { output: string }).output).toContain(dir);
      const read = await toolset.tools.find((t) => t.name === "read_text_file")!.run({ path: join(dir, "notes.txt") });
      expect(read).toMatchObject({ ok: true, output: "hello from the temp dir\n" });
      const outside = await toolset.tools.find((t) => t.name === "read_text_file")!.run({ path: "/etc/hostname" });
      expect(outside).toMatchObject({ ok: false, failure: { type: "mcp_tool_execution_error" } });
    } finally {
      await hub.close();
    }
  });

  test("a name no mcp.json gives is refused before anything starts", () => {
    const hub = hubWith({ everything: everythingEntry() });
    expect(() => hub.check([configured("nope")])).toThrow(/No MCP server "nope" is configured \(configured: everything\)/);
  });

  test("a server whose command does not exist is a listing failure, not a crash", async () => {
    const hub = hubWith({ broken: { command: join(dir, "no-such-program") } });
    const toolset = await hub.open([configured("broken")]);
    expect(toolset.tools).toEqual([]);
    expect(toolset.servers[0]).toMatchObject({ label: "broken", failure: { type: "mcp_protocol_error" } });
  });
});

describe("a misbehaving server", () => {
  const limits = { ...DEFAULT_MCP_LIMITS, callTimeoutMs: 1500 };

  test("a call that hangs fails at the call timeout and the server is started afresh for the next call", async () => {
    const hub = hubWith({ bad: misbehavingEntry() }, { limits });
    try {
      const toolset = await hub.open([configured("bad")]);
      const hang = toolset.tools.find((t) => t.name === "hang")!;
      expect(await hang.run({ choice: "a" })).toMatchObject({ ok: false, failure: { type: "mcp_protocol_error", code: -32001, message: 'MCP server "bad" did not run "hang" within 1.5 s' } });
      const fail = toolset.tools.find((t) => t.name === "fail")!;
      expect(await fail.run({ choice: "a" })).toEqual({
        ok: false, failure: { type: "mcp_tool_execution_error", message: "the tool failed on purpose", content: [{ type: "text", text: "the tool failed on purpose" }] },
      });
    } finally {
      await hub.close();
    }
  });

  test("a crash mid-call is a failure at once, and the next call starts the server again", async () => {
    const hub = hubWith({ bad: misbehavingEntry() }, { limits });
    try {
      const toolset = await hub.open([configured("bad")]);
      const crash = toolset.tools.find((t) => t.name === "crash")!;
      const outcome = await crash.run({ choice: "a" });
      expect(outcome).toMatchObject({ ok: false, failure: { type: "mcp_protocol_error", code: -32000 } });
      expect((outcome as { failure: { message: string } }).failure.message).toContain("closed the connection");
      const flood = toolset.tools.find((t) => t.name === "flood")!;
      const big = await flood.run({ choice: "b" });
      expect(big.ok && big.output.length).toBe(100_000);
    } finally {
      await hub.close();
    }
  });

  test("a line of garbage on stdout leaves the call to its timeout, as an error", async () => {
    const hub = hubWith({ bad: misbehavingEntry() }, { limits });
    try {
      const toolset = await hub.open([configured("bad")]);
      const outcome = await toolset.tools.find((t) => t.name === "garbage")!.run({ choice: "a" });
      expect(outcome.ok).toBe(false);
    } finally {
      await hub.close();
    }
  });
});

describe("what a server may send: one message of 4 MiB at most, a list cut after the request's filter", () => {
  const overBound = /could not run "huge": it sent more than 4 MiB in one message \(the bound on one message\)$/;

  test("a stdio line over the bound fails the call saying so (not as a crash), and the next call starts the server again", async () => {
    const hub = hubWith({ bad: misbehavingEntry() });
    try {
      const toolset = await hub.open([configured("bad")]);
      const outcome = await toolset.tools.find((t) => t.name === "huge")!.run({ choice: "a" });
      expect(outcome).toMatchObject({ ok: false, failure: { type: "mcp_protocol_error" } });
      const { message } = (outcome as { failure: { message: string } }).failure;
      expect(message).toMatch(overBound);
      expect(message).not.toContain("closed the connection");
      expect(await toolset.tools.find((t) => t.name === "last")!.run({ choice: "a" })).toMatchObject({ ok: true, output: "last" });
    } finally {
      await hub.close();
    }
  });

  for (const json of [true, false]) {
    test(`a url server of mcp.json answering 20 MiB (${json ? "a JSON body" : "an SSE stream"}): the call fails at the bound, saying so; the next call works`, async () => {
      const server = startMisbehavingHttp(json);
      const hub = hubWith({ remote: { url: server.url } });
      try {
        const toolset = await hub.open([configured("remote")]);
        const outcome = await toolset.tools.find((t) => t.name === "huge")!.run({});
        expect(outcome).toMatchObject({ ok: false, failure: { type: "mcp_protocol_error" } });
        expect((outcome as { failure: { message: string } }).failure.message).toMatch(overBound);
        expect(await toolset.tools.find((t) => t.name === "ping")!.run({})).toMatchObject({ ok: true, output: "pong" });
      } finally {
        await hub.close();
        await server.stop();
      }
    });
  }

  test("a URL a request names, answering 20 MiB as an SSE stream: the call fails when the bound is hit, not at the call timeout", async () => {
    const server = startMisbehavingHttp(false);
    const hub = hubWith({}, { allowRequestServers: true, allowPrivateUrls: true });
    try {
      const toolset = await hub.open([{ label: "remote", source: { url: server.url }, param: "tools[0].server_url" }]);
      const outcome = await toolset.tools.find((t) => t.name === "huge")!.run({});
      expect((outcome as { failure: { message: string } }).failure.message).toMatch(overBound);
      await toolset.close();
    } finally {
      await server.stop();
    }
  });

  test("allowed_tools is applied before the bound of 128 tools: a tool listed 136th can be called", async () => {
    const hub = hubWith({ many: misbehavingEntry("--tools", "130") });
    try {
      const all = await hub.open([configured("many")]);
      expect(all.tools.length).toBe(DEFAULT_MCP_LIMITS.maxToolsPerServer);
      expect(all.tools.map((t) => t.name)).not.toContain("last");
      const named = await hub.open([configured("many", { allowedTools: { names: ["last", "extra-130"] } })]);
      expect(named.tools.map((t) => t.name)).toEqual(["extra-130", "last"]);
      expect(await named.tools.find((t) => t.name === "last")!.run({ choice: "b" })).toMatchObject({ ok: true, output: "last" });
    } finally {
      await hub.close();
    }
  });
});

describe("servers a request names by URL (Streamable HTTP)", () => {
  const byUrl = (url: string): McpServerRequest => ({ label: "remote", source: { url }, param: "tools[0].server_url" });

  test("refused without --allow-request-mcp", async () => {
    const hub = hubWith({});
    await expect(hub.open([byUrl(http.url)])).rejects.toThrow(/not allowed on this server \(start it with --allow-request-mcp/);
  });

  test("a loopback URL is refused with --allow-request-mcp but without --allow-private-mcp-urls", async () => {
    const hub = hubWith({}, { allowRequestServers: true });
    const refused = hub.open([byUrl(http.url)]);
    await expect(refused).rejects.toThrow(McpRequestError);
    await expect(refused).rejects.toThrow(/resolves to 127\.0\.0\.1, a loopback, private or link-local address \(start the server with --allow-private-mcp-urls/);
    await expect(hub.open([byUrl("http://localhost:1/mcp")])).rejects.toThrow(/loopback/);
    await expect(hub.open([byUrl("http://user:pw@example.com/mcp")])).rejects.toThrow(/credentials/);
    await expect(hub.open([byUrl("file:///etc/passwd")])).rejects.toThrow(/only http and https/);
  });

  test("with both flags: listed and called over Streamable HTTP; the request's session ends with it", async () => {
    const hub = hubWith({}, { allowRequestServers: true, allowPrivateUrls: true });
    const toolset = await hub.open([byUrl(http.url)]);
    const sum = toolset.tools.find((t) => t.name === "get-sum")!;
    expect(sum.origin).toEqual({ label: "remote" });
    expect(await sum.run({ a: 3, b: 4 })).toMatchObject({ ok: true, output: sumText(3, 4) });
    await toolset.close();
    expect(await sum.run({ a: 3, b: 4 })).toMatchObject({ ok: false, failure: { message: 'MCP server "remote" closed its session before the call' } });
  });

  test("each redirect's host is checked again: a hop to the link-local metadata address is refused", async () => {
    const redirector = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.redirect("http://169.254.169.254/latest/meta-data", 307) });
    try {
      // Only the first hop (this test's loopback server) is let through; the guard then judges the redirect.
      const fetch = guardedFetch({ allowPrivate: false, isBlocked: (address) => address !== "127.0.0.1", maxBodyBytes: 1000, maxRedirects: 3 });
      await expect(fetch(`http://127.0.0.1:${redirector.port}/mcp`)).rejects.toThrow(/resolves to 169\.254\.169\.254/);
      const noRedirects = guardedFetch({ allowPrivate: true, maxBodyBytes: 1000, maxRedirects: 0 });
      await expect(noRedirects(`http://127.0.0.1:${redirector.port}/mcp`)).rejects.toThrow(/more than 0 redirects/);
    } finally {
      redirector.stop(true);
    }
  });

  test("an answer larger than the bound is cut off as an error", async () => {
    const big = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("x".repeat(5000)) });
    try {
      const response = await guardedFetch({ allowPrivate: true, maxBodyBytes: 1000, maxRedirects: 0 })(`http://127.0.0.1:${big.port}/`);
      await expect(response.text()).rejects.toThrow(/more than 1000 bytes/);
    } finally {
      big.stop(true);
    }
  });

  test("at most maxSessions sessions are open at once", async () => {
    const hub = hubWith({}, { allowRequestServers: true, allowPrivateUrls: true, limits: { ...DEFAULT_MCP_LIMITS, maxSessions: 1 } });
    const first = await hub.open([byUrl(http.url)]);
    const second = await hub.open([byUrl(http.url)]);
    expect(second.servers[0]).toMatchObject({ failure: { message: "Cannot open another MCP session: 1 are open (the server's limit)" } });
    await first.close();
    const third = await hub.open([byUrl(http.url)]);
    expect(third.tools.length).toBeGreaterThan(0);
    await third.close();
  });
});
