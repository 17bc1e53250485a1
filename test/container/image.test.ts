// `make image` end to end with podman: the image is built offline, started with vLLM's container
// interface (`--model org/name`) against a local stand-in for the hub with the cache on a volume,
// answers the openai client, runs unprivileged, passes its HEALTHCHECK, and a second container on the
// same volume serves without the hub. Then the Deployment of `llamux generate kube` runs under `podman
// kube play` with the same image: its init container pulls the model, its health probe keeps a replica
// whose model does not load from ever being ready, a good one serves, stops on SIGTERM with exit 0, and
// `podman kube down` removes it. Needs podman and runc (CI installs them); skipped otherwise. One file, so the slow
// image build happens once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { tinyGguf } from "../fixtures/tiny-gguf.ts";

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

  async function answerAs(model: string): Promise<OpenAI.ChatCompletion> {
    const client = new OpenAI({ baseURL: "http://127.0.0.1:8000/v1", apiKey: "unused" });
    return client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 8, temperature: 0 });
  }
  const answer = () => answerAs("tiny");

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

  describe("the Deployment of llamux generate kube under podman kube play", () => {
    const dir = mkdtempSync(join(tmpdir(), "llamux-kube-play-"));
    // podman's global flags for this machine, and its ulimits (kube play has no --ulimit) through containers.conf
    const podman = ["podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs"];
    const conf = join(dir, "containers.conf");
    writeFileSync(conf, '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=1000:1000"]\n');
    const env = { CONTAINERS_CONF: conf };
    const played: string[] = [];
    let probe: string[] = [];

    /** The generated Deployment, on the host network (the hub stand-in is on loopback) with the hub's address and token. */
    function deploymentFile(name: string, repo: string): string {
      const generated = sh([process.execPath, join(root, "src", "main.ts"), "generate", "kube", "--model", repo, "--image", tag,
        "--name", name, "--no-gateway", "--no-autoscale"]);
      expect(generated.ok).toBe(true);
      const [deployment] = Bun.YAML.parse(generated.out) as Array<{ kind: string; spec: { template: { spec: Record<string, any> } } }>;
      expect(deployment!.kind).toBe("Deployment");
      const pod = deployment!.spec.template.spec;
      probe = pod.containers[0].readinessProbe.exec.command;
      pod.hostNetwork = true;
      // on the host network podman maps no ports (it refuses to)
      for (const container of pod.containers) delete container.ports;
      // podman 4.3 restarts an exited init container under Always (Kubernetes runs it once), and then fails the play
      pod.restartPolicy = "OnFailure";
      for (const container of [...pod.initContainers, ...pod.containers]) {
        container.env = [...container.env.filter((e: { name: string }) => e.name !== "HF_TOKEN"),
          { name: "HF_ENDPOINT", value: hub.url }, { name: "HF_TOKEN", value: HF_TOKEN }];
      }
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, Bun.YAML.stringify(deployment));
      return file;
    }

    /** Runs without blocking: kube play waits for the init container, whose pull this process's hub stand-in answers. */
    async function play(file: string): Promise<void> {
      const child = Bun.spawn([...podman, "kube", "play", file], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
      played.push(file);
      const out = `${await new Response(child.stdout).text()}${await new Response(child.stderr).text()}`;
      if ((await child.exited) !== 0) throw new Error(`podman kube play failed: ${out}`);
    }

    function down(file: string): { ok: boolean; out: string } {
      const result = sh([...podman, "kube", "down", file], env);
      played.splice(played.indexOf(file), 1);
      return result;
    }

    /** The serving container of a played Deployment (podman names it POD-CONTAINER). */
    function serverContainer(name: string): string {
      const names = sh(["podman", "ps", "-a", "--format", "{{.Names}}"]).out.split("\n");
      const found = names.find((n) => n.startsWith(name) && n.endsWith("-llamux"));
      if (!found) throw new Error(`no llamux container of ${name} among ${names.join(", ")}`);
      return found;
    }

    afterAll(() => {
      for (const file of [...played]) down(file);
      rmSync(dir, { recursive: true, force: true });
    });

    test("a replica whose model does not load is never ready; a good one is, serves, and stops cleanly", async () => {
      // a well-formed GGUF (it pulls) without the model's tensors (it cannot load)
      hub.setRepo("llamux-test/Broken-GGUF", { token: HF_TOKEN, files: [{ path: "Broken-F16.gguf", content: await tinyGguf("broken") }] });
      const broken = deploymentFile("llamux-broken", "llamux-test/Broken");
      await play(broken);
      // pulled, started, and answering 503 with the load's failure: the health probe fails
      const deadline = Date.now() + 90_000;
      let health: Response | undefined;
      while (Date.now() < deadline) {
        health = await fetch("http://127.0.0.1:8000/health").catch(() => undefined);
        if (health?.status === 503 && (await health.text()).includes("failed to load")) break;
        await Bun.sleep(250);
      }
      expect(health?.status).toBe(503);
      // the probes' own command, run in the container as the kubelet runs an exec probe (podman's healthcheck
      // would wrap it in a shell, which the image does not have)
      expect(sh(["podman", "exec", serverContainer("llamux-broken"), ...probe]).ok).toBe(false);
      expect(down(broken).ok).toBe(true);

      const good = deploymentFile("llamux-good", "llamux-test/Tiny");
      await play(good);
      const ready = Date.now() + 120_000;
      while ((await fetch("http://127.0.0.1:8000/health").catch(() => undefined))?.status !== 200) {
        if (Date.now() > ready) throw new Error(`the pod did not become ready: ${sh(["podman", "pod", "logs", "llamux-good-pod"]).out}`);
        await Bun.sleep(250);
      }
      const reply = await answerAs("llamux-test/Tiny");
      expect(reply.choices).toHaveLength(1);
      const container = serverContainer("llamux-good");
      expect(sh(["podman", "exec", container, ...probe]).ok).toBe(true);
      // the init container pulled the model into the pod's cache before the server started
      expect(sh(["podman", "logs", container]).out).not.toMatch(/pulling it/);

      // The pod's stop sends SIGTERM: the server ends its engines and exits 0 by itself. (podman 4.3's kube
      // down alone kills a running pod with SIGKILL, so the stop comes first, as a kubelet's would.)
      expect(sh([...podman, "pod", "stop", "llamux-good-pod-0"], env).ok).toBe(true);
      expect(sh(["podman", "inspect", container, "--format", "{{.State.ExitCode}}"]).out.trim()).toBe("0");
      expect(sh(["podman", "logs", container]).out).toContain("SIGTERM received: stopping engines");
      expect(down(good).ok).toBe(true);
      expect(sh(["podman", "ps", "-a", "--format", "{{.Names}}"]).out).not.toContain("llamux-good");
      expect(sh(["podman", "pod", "ps", "--format", "{{.Name}}"]).out).not.toContain("llamux-good");
      expect(await portFree(8000)).toBe(true);
    }, 300_000);
  });

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
