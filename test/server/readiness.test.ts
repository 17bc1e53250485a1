// Readiness as scripts, containers and orchestrators see it: profile b's /health (and /ping) answer 503
// until the model named on the command line has loaded, then 200 (vLLM is not up before its model is);
// a model that cannot load keeps it 503, saying why. Profiles a and c answer their probes at once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { engineProcesses } from "../fixtures/child-processes.ts";
import { freePort } from "./serve-fixture.ts";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");
let model: string;
let dir: string;
const children: Array<ReturnType<typeof Bun.spawn>> = [];

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
  dir = mkdtempSync(join(tmpdir(), "llamux-readiness-"));
});

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((child) => child.exited));
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `llamux serve` and polls `path` from the first moment, recording each answer's status until `until` is seen. */
async function statusesFromStart(args: string[], path: string, until: number, timeoutMs = 60_000) {
  const port = await freePort();
  const child = Bun.spawn([process.execPath, main, "serve", ...args, "--port", String(port)], {
    env: { ...process.env, LLAMUX_LOG_LEVEL: "warn", LLAMUX_MODELS: dir }, stdout: "ignore", stderr: "ignore",
  });
  children.push(child);
  const statuses: number[] = [];
  const bodies: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      statuses.push(response.status);
      bodies.push(await response.text());
      if (response.status === until) break;
    } catch {
      // not listening yet
    }
    await Bun.sleep(5);
  }
  return { statuses, bodies, port, child };
}

test("profile b: /health is 503 while the model loads, then 200; the model is loaded by then", async () => {
  const { statuses, bodies, port, child } = await statusesFromStart([model, "--profile", "b", "--served-model-name", "org/tiny", "--max-model-len", "512"], "/health", 200);
  expect(statuses.at(-1)).toBe(200);
  expect(statuses[0]).toBe(503);
  expect(statuses.slice(0, -1).every((status) => status === 503)).toBe(true);
  expect(JSON.parse(bodies[0]!)).toEqual({ error: { message: 'Loading model "org/tiny"', type: "ServiceUnavailableError", param: null, code: 503 } });
  expect(bodies.at(-1)).toBe("");
  // by then the engine process runs, before any request asked for the model
  expect(engineProcesses(child.pid)).toHaveLength(1);
  expect((await fetch(`http://127.0.0.1:${port}/ping`, { method: "POST" })).status).toBe(200);
});

test("profile b: a model that cannot load keeps /health at 503 and says why", async () => {
  const broken = join(dir, "broken.gguf");
  writeFileSync(broken, "this is not a GGUF file");
  const { statuses, bodies } = await statusesFromStart([broken, "--profile", "b"], "/health", 200, 8000);
  expect(statuses.length).toBeGreaterThan(3);
  expect(statuses.every((status) => status === 503)).toBe(true);
  expect(JSON.parse(bodies.at(-1)!).error.message).toStartWith(`Cannot serve "${broken}": it failed to load`);
});

test("profiles a and c answer their probes at once, before any model loads", async () => {
  const a = await statusesFromStart([model, "--profile", "a"], "/api/version", 200);
  expect(a.statuses).toEqual([200]);
  const c = await statusesFromStart([model, "--profile", "c"], "/lmstudio-greeting", 200);
  expect(c.statuses).toEqual([200]);
});
