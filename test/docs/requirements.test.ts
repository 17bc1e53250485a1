// The test command on a fresh machine: the requirements of docs/building.md name, in one apt-get line,
// every package the build and the tests need (scripts/test-requirements.sh is the list, .ci/run installs
// from it), and `make test` checks first, naming what to install, before it builds or runs anything.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const script = join(root, "scripts", "test-requirements.sh");
let bareBin: string;

beforeAll(() => {
  // a PATH with bash and make only: no compiler, node, tmux, systemd-analyze, ...
  bareBin = mkdtempSync(join(tmpdir(), "llamux-bare-path-"));
  symlinkSync(Bun.which("bash")!, join(bareBin, "bash"));
  symlinkSync(Bun.which("make")!, join(bareBin, "make"));
});

afterAll(() => rmSync(bareBin, { recursive: true, force: true }));

const run = (argv: string[], path: string) => Bun.spawnSync(argv, { cwd: root, env: { PATH: path, HOME: process.env.HOME ?? "/root" }, stdout: "pipe", stderr: "pipe" });

test("docs/building.md's requirements install every package the tests need in one apt-get line", () => {
  const listed = run(["bash", script, "--list"], process.env.PATH!).stdout.toString().trim().split(" ");
  expect(listed).toEqual(expect.arrayContaining(["build-essential", "nodejs", "npm", "tmux", "chromium", "systemd"]));
  const page = readFileSync(join(root, "docs", "building.md"), "utf8");
  const lines = page.split("\n").filter((line) => /^\s*sudo apt-get install\b/.test(line));
  expect(lines).toHaveLength(1);
  const installed = lines[0]!.split(/\s+/).filter((word) => word && !word.startsWith("-") && !["sudo", "apt-get", "install"].includes(word));
  expect(installed.sort()).toEqual([...listed].sort());
});

test(".ci/run installs from the same list", () => {
  expect(readFileSync(join(root, ".ci", "run"), "utf8")).toContain("scripts/test-requirements.sh --missing");
});

test("on a machine lacking them, the check names each tool, its package and the line that installs them", () => {
  const result = run(["bash", script], bareBin);
  expect(result.exitCode).toBe(1);
  const message = result.stderr.toString();
  for (const tool of ["tmux (Debian package tmux)", "systemd-analyze (Debian package systemd)", "node (Debian package nodejs)", "cc (Debian package build-essential)"]) {
    expect(message).toContain(tool);
  }
  expect(message).toMatch(/sudo apt-get install -y build-essential .*tmux systemd/);
  expect(run(["bash", script, "--missing"], bareBin).stdout.toString()).toContain("tmux");
  // this machine has everything (the rest of the suite needs it)
  expect(run(["bash", script], process.env.PATH!).exitCode).toBe(0);
});

test("make test runs the check before building or testing anything", () => {
  const result = run(["make", "--no-print-directory", "test"], bareBin);
  expect(result.exitCode).not.toBe(0);
  const output = result.stdout.toString() + result.stderr.toString();
  expect(output).toContain("make test needs what this machine lacks:");
  expect(output).toContain("sudo apt-get install -y");
  expect(output).not.toContain("npm ci");
  expect(output).not.toContain("run-tests");
});
