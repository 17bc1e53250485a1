// `llamux run` from the checkout: streams text, respects options, routes llama.cpp's log through
// llamux's logger (silent unless asked) and defaults to one thread per physical core.
import { beforeAll, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { physicalCoreCount } from "../../ffi/hardware.ts";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");
let model: string;

async function llamux(args: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, main, ...args], { env: { ...process.env, LLAMUX_HOST: "127.0.0.1:9", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
});

test("run streams a greedy completion, the same twice", async () => {
  const args = ["run", model, "Once upon a time", "-n", "10", "--temperature", "0"];
  const first = await llamux(args, { LLAMUX_LOG_LEVEL: "info" });
  const second = await llamux(args, { LLAMUX_LOG_LEVEL: "info" });
  expect(first.exitCode).toBe(0);
  expect(first.stdout.length).toBeGreaterThan(1);
  expect(second.stdout).toBe(first.stdout);
});

test("llama.cpp's log is quiet by default and shown at LLAMUX_LOG_LEVEL=debug", async () => {
  const quiet = await llamux(["run", model, "Hi", "-n", "2"], { LLAMUX_LOG_LEVEL: "info" });
  expect(quiet.exitCode).toBe(0);
  expect(quiet.stderr).not.toContain("[llama.cpp]");
  const loud = await llamux(["run", model, "Hi", "-n", "2"], { LLAMUX_LOG_LEVEL: "debug" });
  expect(loud.exitCode).toBe(0);
  expect(loud.stderr).toContain("[llama.cpp]");
  expect(loud.stderr).toMatch(/\[llama\.cpp\] .*llama_model_loader/);
});

test("the engine uses one thread per physical core by default", async () => {
  const result = await llamux(["run", model, "Hi", "-n", "1"], { LLAMUX_LOG_LEVEL: "info" });
  expect(result.stderr).toContain(`${physicalCoreCount()} threads`);
  expect(physicalCoreCount()).toBeLessThanOrEqual(availableParallelism());
  expect(physicalCoreCount()).toBeGreaterThanOrEqual(1);
});

test("bad options are usage errors and a missing model names the path", async () => {
  const badNumber = await llamux(["run", model, "Hi", "--temperature", "warm"]);
  expect(badNumber.exitCode).not.toBe(0);
  expect(badNumber.stderr).toContain('--temperature "warm"');
  const missing = await llamux(["run", "/nonexistent/model.gguf", "Hi"]);
  expect(missing.exitCode).toBe(1);
  expect(missing.stderr).toContain("/nonexistent/model.gguf");
});
