// The SDK page's examples (docs/sdk.md) run as files, as a user would run them, on the tiny LFM2 model.
import { beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";

const root = join(import.meta.dir, "..", "..");
let model: string;

beforeAll(async () => {
  model = await ensureModel("tiny-lfm2");
}, 120_000);

async function runExample(file: string, args: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, join(root, "examples", file), ...args], {
    cwd: root, env: { ...process.env, LLAMUX_LOG_LEVEL: "warn", LLAMUX_MODEL: "", ...env }, stdout: "pipe", stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

test("examples/batch.ts prints one answer per prompt, in order, and a progress bar on stderr", async () => {
  const { stdout, stderr, code } = await runExample("batch.ts", [model]);
  expect(code).toBe(0);
  const lines = stdout.trim().split("\n");
  expect(lines.map((line) => line.split(" -> ")[0])).toEqual(["Name a colour.", "Name a fruit.", "Name a planet."]);
  for (const line of lines) expect(line).toMatch(/ -> ".*" \(\d+ tokens, (stop|length)\)$/);
  expect(stderr).toContain("Processed prompts: 100%");
  expect(stderr).toContain("3/3");
}, 240_000);

test("examples/tool-calling.ts makes a valid call, answers it and gets a reply (model from LLAMUX_MODEL)", async () => {
  const { stdout, stderr, code } = await runExample("tool-calling.ts", [], { LLAMUX_MODEL: model });
  expect(stderr).not.toContain("error");
  expect(code).toBe(0);
  const lines = stdout.trim().split("\n");
  expect(lines[0]).toMatch(/^call get_weather\(\{"city":"(Paris|London|Tokyo)","unit":"(celsius|fahrenheit)"\}\)$/);
  expect(lines.at(-1)).toStartWith("reply: ");
}, 240_000);

test("an example without a model says how to run it", async () => {
  const { stderr, code } = await runExample("batch.ts", []);
  expect(code).toBe(2);
  expect(stderr).toContain("usage: bun examples/batch.ts MODEL");
});
