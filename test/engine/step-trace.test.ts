// LLAMUX_STEP_TRACE: a line per step in the file it names, nothing without it, and a file that cannot be
// written stops the trace with one message instead of failing steps.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StepTrace } from "../../src/engine/step-trace.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-step-trace-"));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const step = { decodeRows: 7, promptTokens: 64, stepMs: 412.345, decodeMs: 380.5, waiting: 2 };

test("each step is a line of its rows, prompt tokens, times and waiting requests", () => {
  const path = join(dir, "steps.txt");
  const trace = StepTrace.fromEnvironment({ LLAMUX_STEP_TRACE: path })!;
  trace.record(step);
  trace.record({ ...step, promptTokens: 0 });
  const lines = readFileSync(path, "utf8").trim().split("\n").map((line) => line.split(" "));
  expect(lines).toHaveLength(2);
  expect(lines[0]!.slice(1)).toEqual(["7", "64", "412.3", "380.5", "2"]);
  expect(Number(lines[0]![0])).toBeGreaterThan(1.7e12);
  expect(lines[1]![2]).toBe("0");
});

test("off without the variable; an unwritable file stops the trace with one message", () => {
  expect(StepTrace.fromEnvironment({})).toBeUndefined();
  const trace = StepTrace.fromEnvironment({ LLAMUX_STEP_TRACE: join(dir, "missing", "steps.txt") })!;
  const write = process.stderr.write.bind(process.stderr);
  let messages = 0;
  process.stderr.write = ((chunk: string | Uint8Array) => (String(chunk).includes("cannot write the step trace") && messages++, true)) as typeof process.stderr.write;
  try {
    trace.record(step);
    trace.record(step);
  } finally {
    process.stderr.write = write;
  }
  expect(messages).toBe(1);
});
