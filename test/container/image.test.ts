// `make image` end to end with podman: the image is built offline, started with vLLM's container
// interface (`--model org/name`) against a local stand-in for the hub with the cache on a volume,
// answers the openai client, runs unprivileged, passes its HEALTHCHECK, and a second container on the
// same volume serves without the hub. Needs podman and runc (CI installs them); skipped otherwise.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";

const root = join(import.meta.dir, "..", "..");
const tag = `localhost/llamux-test:${process.pid}`;
const volume = `llamux-test-cache-${process.pid}`;
// What podman needs on our machines (hybrid cgroups, low hard limits); users' machines do not.
const podmanRun = ["podman", "run", "--runtime", "runc", "--cgroup-manager", "cgroupfs",
  "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=1000:1000"];
const HF_TOKEN = "hf_containertesttoken";

function sh(args: string[], env: Record<string, string> = {}): { ok: boolean; out: string } {
  const result = Bun.spawnSync(args, { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { ok: result.exitCode === 0, out: `${result.stdout.toString()}${result.stderr.toString()}` };
}

function whyNoPodman(): string | undefined {
  if (!sh(["podman", "--version"]).ok) return "podman is not installed (apt-get install podman runc)";
  if (process.getuid?.() !== 0) return "the image test runs podman as root";
  return undefined;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "0.0.0.0", () => probe.close(() => resolve(true)));
  });
}

const skipReason = whyNoPodman();
if (skipReason) console.warn(`skipping the container image test: ${skipReason}`);

describe.skipIf(skipReason !== undefined)("the profile-b container image", () => {
  let hub: HubServer;
  let buildLog = "";
  const containers: string[] = [];

  /** Starts the image detached on the host network (the hub stand-in listens on loopback). */
  function start(name: string, env: Record<string, string>): void {
    const envFlags = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const started = sh([...podmanRun, "-d", "--name", name, "--network", "host", "--ipc=host",
      "-v", `${volume}:/root/.cache/huggingface`, ...envFlags, tag, "--model", "llamux-test/Tiny", "--served-model-name", "tiny", "--max-model-len", "1024"]);
    // (podman also complains on stderr that it cannot reach systemd to time the health checks)
    if (!started.ok) throw new Error(`podman run failed: ${started.out}`);
    expect(started.out).toMatch(/^[0-9a-f]{64}$/m);
    containers.push(name);
  }

  async function waitServing(name: string): Promise<void> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        const response = await fetch("http://127.0.0.1:8000/v1/models");
        if (response.ok && JSON.stringify(await response.json()).includes("\"tiny\"")) return;
      } catch { /* not up yet */ }
      if (Date.now() > deadline) throw new Error(`container did not serve: ${sh(["podman", "logs", name]).out}`);
      await Bun.sleep(250);
    }
  }

  async function answer(): Promise<OpenAI.ChatCompletion> {
    const client = new OpenAI({ baseURL: "http://127.0.0.1:8000/v1", apiKey: "unused" });
    return client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hello" }], max_tokens: 8, temperature: 0 });
  }

  function stop(name: string): void {
    sh(["podman", "stop", "-t", "5", name]);
    sh(["podman", "rm", "-f", name]);
  }

  beforeAll(async () => {
    if (!(await portFree(8000))) throw new Error("port 8000 is in use: the image test runs the container on the host network at vLLM's port");
    const model = await ensureModel("tiny-llama");
    // a gated repository, named as vLLM users name models: org/name, found as org/name-GGUF
    hub = await startHubServer({ "llamux-test/Tiny-GGUF": { token: HF_TOKEN, files: [{ path: "Tiny-F16.gguf", content: readFileSync(model) }] } });
    const built = sh(["bash", "scripts/image/build-image.sh"], { IMAGE_TAG: tag, LLAMUX_GPU: "cpu" });
    buildLog = built.out;
    if (!built.ok) throw new Error(`make image failed:\n${built.out}`);
  }, 300_000);

  afterAll(async () => {
    for (const name of containers) stop(name);
    sh(["podman", "volume", "rm", "-f", volume]);
    sh(["podman", "rmi", "-f", tag]);
    await hub?.stop();
  });

  test("the build prints the image's size", () => {
    expect(buildLog).toMatch(new RegExp(`image ${tag.replace(/[.:/]/g, "\\$&")}: \\d+ MiB`));
  });

  test("pulls --model org/name into the volume, answers the openai client, runs unprivileged and healthy", async () => {
    const name = `llamux-test-${process.pid}-1`;
    start(name, { HF_ENDPOINT: hub.url, HF_TOKEN });
    await waitServing(name);
    const reply = await answer();
    expect(reply.choices).toHaveLength(1);
    expect(reply.usage!.completion_tokens).toBeGreaterThan(0);
    expect(reply.usage!.completion_tokens).toBeLessThanOrEqual(8);
    expect(hub.requests.some((r) => r.path.includes("Tiny-GGUF") && r.authorization === `Bearer ${HF_TOKEN}`)).toBe(true);
    // a fresh named volume belongs to the image's user, so the server dropped root
    expect(sh(["podman", "top", name, "user"]).out).toMatch(/^USER\s+llamux\s*$/m);
    const health = sh(["podman", "healthcheck", "run", name]);
    expect(health.ok).toBe(true);
    stop(name);
  }, 180_000);

  test("a second container on the same volume serves from the cache without the hub", async () => {
    await hub.stop();
    const before = hub.requests.length;
    const name = `llamux-test-${process.pid}-2`;
    start(name, { HF_ENDPOINT: "http://127.0.0.1:9" });
    await waitServing(name);
    expect((await answer()).choices).toHaveLength(1);
    expect(hub.requests.length).toBe(before);
    stop(name);
  }, 180_000);
});
