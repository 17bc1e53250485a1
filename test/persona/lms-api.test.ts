// The lms personality against a real profile-c server it starts itself: get (a background download from
// the local hub fixture, polled to the end), ls, load with --context-length and --ttl, ps, unload, and the
// server's start and stop. Run from the sources with LLAMUX_PERSONA=lms, in a temporary store and state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { freePort } from "../server/serve-fixture.ts";

const REPO = "llamux-test/Tiny-Chat-GGUF";
const main = join(import.meta.dir, "..", "..", "src", "main.ts");
let dir: string;
let hub: HubServer;
let port: number;

async function lms(args: string[]) {
  const child = Bun.spawn([process.execPath, main, ...args], {
    env: { ...process.env, LLAMUX_PERSONA: "lms", LLAMUX_STATE_DIR: join(dir, "state"), LLAMUX_MODELS: join(dir, "store"), HF_ENDPOINT: hub.url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}


beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-lms-"));
  hub = await startHubServer({ [REPO]: { files: [{ path: "tiny-chat-Q4_K_M.gguf", content: new Uint8Array(readFileSync(await ensureModel("tiny-llama"))) }] } });
  port = await freePort();
  const started = await lms(["server", "start", "--port", String(port)]);
  if (started.exitCode !== 0) throw new Error(`lms server start failed: ${started.stderr}`);
}, 120_000);

afterAll(async () => {
  await lms(["server", "stop"]);
  await hub?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("lms against its background server", () => {
  let key: string;

  test("ls on an empty store says how to get a model", async () => {
    const result = await lms(["ls"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("You have no models yet");
  }, 60_000);

  test("get downloads a model with @quantization and ls lists it", async () => {
    const got = await lms(["get", `${REPO}@Q4_K_M`, "-y"]);
    expect(got.stderr).not.toContain("Error");
    expect(got.exitCode).toBe(0);
    expect(got.stdout).toContain(`Download completed: ${REPO}`);
    const listed = JSON.parse((await lms(["ls", "--json"])).stdout) as Array<{ key: string; type: string; size_bytes: number }>;
    expect(listed).toHaveLength(1);
    key = listed[0]!.key;
    expect(key.toLowerCase()).toContain("tiny-chat-gguf");
    const table = (await lms(["ls"])).stdout.split("\n");
    expect(table[0]).toMatch(/^You have 1 model, taking up [\d.]+ [KM]B of disk space\.$/);
    expect(table[2]).toMatch(/^LLM\s+PARAMS\s+ARCH\s+SIZE\s+DEVICE$/);
    expect(table[3]).toStartWith(key);
    expect(table[3]).toMatch(/\s+llama\s+[\d.]+ [KM]B\s+Local$/);
    expect((await lms(["get", `${REPO}@Q4_K_M`])).stdout).toContain("already downloaded");
  }, 60_000);

  test("load with --context-length and --ttl, ps shows it, unload --all unloads it", async () => {
    const loaded = await lms(["load", key, "--context-length", "256", "--ttl", "600", "--gpu", "off"]);
    expect(loaded.stderr).not.toContain("Error");
    expect(loaded.exitCode).toBe(0);
    expect(loaded.stdout).toMatch(/^Model loaded successfully in [\d.]+s\./);
    const ps = await lms(["ps"]);
    expect(ps.stdout).toStartWith("   LOADED MODELS\n\nIdentifier: ");
    expect(ps.stdout).toContain("  • Context: 256");
    expect((await lms(["ls"])).stdout).toContain("Local    ✓ LOADED");
    const instances = JSON.parse((await lms(["ps", "--json"])).stdout) as Array<{ id: string; config: { context_length: number } }>;
    expect(instances).toHaveLength(1);
    expect(instances[0]!.config.context_length).toBe(256);
    const unloaded = await lms(["unload", "--all"]);
    expect(unloaded.stdout).toBe(`Model "${instances[0]!.id}" unloaded.\n`);
    expect((await lms(["ps"])).stdout).toStartWith("No models are currently loaded.");
  }, 60_000);

  test("a second server start says it runs already; a start on a busy port from another state fails", async () => {
    const again = await lms(["server", "start", "--port", String(port)]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe(`The server is already running on port ${port}.\n`);
    const elsewhere = Bun.spawn([process.execPath, main, "server", "start", "--port", String(port)], {
      env: { ...process.env, LLAMUX_PERSONA: "lms", LLAMUX_STATE_DIR: join(dir, "other-state") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(elsewhere.stderr).text(), elsewhere.exited]);
    expect(code).toBe(1);
    expect(stderr).toContain(`Error: port ${port} is in use by another server`);
  }, 60_000);

  test("loading a model that does not exist fails with the server's message", async () => {
    const result = await lms(["load", "nobody/nothing-GGUF"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^Loading model "nobody\/nothing-GGUF"\.\.\.\nError: .+/);
  }, 60_000);
});
