// `llamux mcp list`: the servers of an mcp.json, each really started (server-everything and
// server-filesystem from npm over stdio) with the tools it lists; one that cannot start makes the exit
// status 1 with the reason; LM Studio's ~/.lmstudio/mcp.json is read with --profile c.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { everythingEntry, filesystemEntry } from "../fixtures/mcp-servers.ts";
import { llamux } from "./cli-fixture.ts";

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "llamux-mcp-list-"));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test("lists each configured server with its tools", async () => {
  const config = join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: everythingEntry(), files: filesystemEntry(dir) } }));
  const { stdout, exitCode } = await llamux(["mcp", "list", "--mcp-config", config]);
  expect(exitCode).toBe(0);
  expect(stdout).toMatch(/^everything {2}\(command: .*server-everything.* stdio\)$/m);
  expect(stdout).toMatch(/^ {2}get-structured-content +Returns structured content/m);
  expect(stdout).toMatch(/^files {2}\(command: /m);
  expect(stdout).toMatch(/^ {2}list_allowed_directories +/m);
});

test("a server that cannot start is shown with the reason, and the exit status is 1", async () => {
  const config = join(dir, "broken.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { broken: { command: join(dir, "no-such-program") } } }));
  const { stdout, exitCode } = await llamux(["mcp", "list", "--mcp-config", config]);
  expect(exitCode).toBe(1);
  expect(stdout).toContain("broken  (command: ");
  expect(stdout).toContain("cannot list its tools:");
});

test("--profile c reads LM Studio's mcp.json; without any file it says how to add servers", async () => {
  const home = join(dir, "home");
  mkdirSync(join(home, ".lmstudio"), { recursive: true });
  writeFileSync(join(home, ".lmstudio", "mcp.json"), JSON.stringify({ mcpServers: { everything: everythingEntry() } }));
  const lmStudio = await llamux(["mcp", "list", "--profile", "c"], { HOME: home });
  expect(lmStudio.exitCode).toBe(0);
  expect(lmStudio.stdout).toMatch(/^everything {2}\(command: /m);
  const none = await llamux(["mcp", "list"], { HOME: home });
  expect(none.exitCode).toBe(0);
  expect(none.stdout).toContain("No MCP servers are configured");
});
