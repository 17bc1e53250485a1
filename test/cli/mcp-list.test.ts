// `llamux mcp list`: the servers of an mcp.json, each really started (server-everything and
// server-filesystem from npm over stdio) with the tools it lists; one that cannot start makes the exit
// status 1 with the reason; LM Studio's ~/.lmstudio/mcp.json is read with --profile c.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { everythingEntry, filesystemEntry, misbehavingEntry } from "../fixtures/mcp-servers.ts";
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

test("a server's names and descriptions are printed with their control characters escaped, and cut to a width", async () => {
  const config = join(dir, "hostile.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { hostile: misbehavingEntry("--hostile-names") } }));
  const { stdout, exitCode } = await llamux(["mcp", "list", "--mcp-config", config]);
  expect(exitCode).toBe(0);
  // Nothing but printable text and the line ends: no ESC, BEL, CR, NUL.
  expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  expect(stdout).toContain("  \\x1b]0;owned\\x07\\x1b[2Jretitled\\x0d\\x00");
  expect(stdout).toContain("rings\\x07 the \\x1b[31mbell\\x1b[0m\\x0dand hides this");
  // The 10,000-letter name is cut, and so is the column every other line is padded to.
  const lines = stdout.trimEnd().split("\n");
  expect(lines.find((line) => line.startsWith("  nnnn"))).toMatch(/^ {2}n+… {2}A name of 10,000 letters$/);
  expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(200);
});
