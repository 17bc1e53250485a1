// `make test`: runs `bun test` over test/ (or the paths given), streams its output, and ends with one
// line "N passed, N failed[, N skipped]", after the ten slowest test files by wall time (on stderr: what
// keeps CI within its time). Exits non-zero when anything failed or bun itself did.
//
// The counts come from bun's closing summary (" 12 pass", " 1 fail", …) rather than its JUnit report,
// because the JUnit report leaves out errors thrown outside any test (a test file that fails to load),
// which the summary counts as failures. If bun dies before its summary (a native crash in a test), the
// per-test "(pass)"/"(fail)" lines seen so far are counted and the crash counts as one failure.
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";

const root = join(import.meta.dir, "..");
// Tests that generate models or start servers take minutes on 2 cores.
const TIMEOUT_MS = 120_000;

// Arguments pass through to bun test; test paths get a "./" so that bun takes them as paths, not as
// name filters that would also pick up test files of .native/llama.cpp.
const args = process.argv.slice(2).map((arg) => (arg === "test" || arg.startsWith("test/") ? `./${arg}` : arg));
if (!args.some((arg) => arg.startsWith("./") || arg.startsWith("/"))) args.push("./test");
if (!args.some((arg) => arg.startsWith("--timeout"))) args.unshift(`--timeout=${TIMEOUT_MS}`);

const color = process.stderr.isTTY === true;
// Servers keep prompt states on disk by default: the tests' go to a folder of this run, not the user's cache.
const promptStates = mkdtempSync(join(tmpdir(), "llamux-test-prompts-"));
const bun = Bun.spawn([process.execPath, "test", ...args], {
  cwd: root,
  stdio: ["inherit", "inherit", "pipe"],
  env: { ...process.env, LLAMUX_CACHE_DISK: process.env.LLAMUX_CACHE_DISK ?? promptStates, ...(color ? { FORCE_COLOR: "1" } : {}) },
});

/** Each test file's wall time, from the header bun prints when the file starts to the next file's. */
class FileWallTimes {
  private readonly times = new Map<string, number>();
  private current: { file: string; since: number } | undefined;
  private partial = "";

  get count(): number {
    return this.times.size;
  }

  saw(text: string): void {
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop()!;
    for (const line of lines) {
      const header = line.replace(/\x1b\[[0-9;]*m/g, "").match(/^(test\/\S+\.test\.[jt]sx?):$/);
      if (!header) continue;
      this.end();
      this.current = { file: header[1]!, since: performance.now() };
    }
  }

  end(): void {
    if (this.current) this.times.set(this.current.file, (this.times.get(this.current.file) ?? 0) + performance.now() - this.current.since);
    this.current = undefined;
  }

  /** The `most` slowest, "142 s test/x.test.ts, ...". */
  slowest(most: number): string {
    return [...this.times].sort((a, b) => b[1] - a[1]).slice(0, most).map(([file, ms]) => `${Math.round(ms / 1000)} s ${file}`).join(", ");
  }
}

// bun test reports on stderr: pass it through as it comes and keep it for counting. A file's wall time
// (hooks, servers and process starts included, which bun's per-test times leave out) runs from its
// header line ("test/x.test.ts:") to the next one.
let report = "";
const decoder = new TextDecoder();
const fileTimes = new FileWallTimes();
for await (const chunk of bun.stderr) {
  process.stderr.write(chunk);
  const text = decoder.decode(chunk, { stream: true });
  report += text;
  fileTimes.saw(text);
}
const exitCode = await bun.exited;
fileTimes.end();
rmSync(promptStates, { recursive: true, force: true });
if (fileTimes.count > 1) process.stderr.write(`\nslowest test files, wall time: ${fileTimes.slowest(10)}\n`);

const counts = countResults(report.replace(/\x1b\[[0-9;]*m/g, ""), exitCode);
const parts = [`${counts.passed} passed`, `${counts.failed} failed`];
if (counts.skipped > 0) parts.push(`${counts.skipped} skipped`);
console.log(parts.join(", "));
process.exit(counts.failed > 0 || exitCode !== 0 ? 1 : 0);

function countResults(text: string, exitCode: number): { passed: number; failed: number; skipped: number } {
  const summary = (word: string) => {
    const match = text.match(new RegExp(`^\\s*(\\d+) ${word}$`, "m"));
    return match ? Number(match[1]) : undefined;
  };
  const passed = summary("pass");
  const failed = summary("fail");
  if (passed !== undefined || failed !== undefined) {
    const reported = failed ?? 0;
    return {
      passed: passed ?? 0,
      // bun can exit non-zero with a summary of no failures (no test files matched, a crash after the summary)
      failed: exitCode !== 0 && reported === 0 ? 1 : reported,
      skipped: (summary("skip") ?? 0) + (summary("todo") ?? 0),
    };
  }
  const lines = (tag: string) => text.split("\n").filter((line) => line.startsWith(`(${tag})`)).length;
  return {
    passed: lines("pass"),
    failed: lines("fail") + (exitCode !== 0 ? 1 : 0),
    skipped: lines("skip") + lines("todo"),
  };
}

