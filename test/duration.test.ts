// Go durations and keep_alive values, as Ollama's routes, OLLAMA_KEEP_ALIVE and the CLI's chat read them.
import { expect, test } from "bun:test";
import { keepAliveFromEnv, keepAliveMs, parseGoDuration } from "../src/duration.ts";

test("parseGoDuration reads Go's units, fractions, signs and sums", () => {
  expect(parseGoDuration("5m")).toBe(300_000);
  expect(parseGoDuration("1h30m")).toBe(5_400_000);
  expect(parseGoDuration("1.5s")).toBe(1500);
  expect(parseGoDuration("-1s")).toBe(-1000);
  expect(parseGoDuration("+250ms")).toBe(250);
  expect(parseGoDuration("0")).toBe(0);
  expect(parseGoDuration("2us")).toBeCloseTo(0.002);
});

test("parseGoDuration refuses what Go refuses, in Go's words", () => {
  expect(() => parseGoDuration("300")).toThrow('time: missing unit in duration "300"');
  expect(() => parseGoDuration("5d")).toThrow('time: unknown unit "d" in duration "5d"');
  expect(() => parseGoDuration("")).toThrow('time: invalid duration ""');
  expect(() => parseGoDuration(".s")).toThrow('time: invalid duration ".s"');
});

test("keepAliveMs: seconds or a duration, negative meaning forever", () => {
  expect(keepAliveMs(30)).toBe(30_000);
  expect(keepAliveMs(" 10m ")).toBe(600_000);
  expect(keepAliveMs(-1)).toBe(Infinity);
  expect(keepAliveMs("-1m")).toBe(Infinity);
});

test("keepAliveFromEnv also takes whole seconds, as OLLAMA_KEEP_ALIVE does", () => {
  expect(keepAliveFromEnv("300")).toBe(300_000);
  expect(keepAliveFromEnv("-1")).toBe(Infinity);
  expect(keepAliveFromEnv("1h")).toBe(3_600_000);
  expect(() => keepAliveFromEnv("soon")).toThrow(SyntaxError);
});
