// One model split across two "machines": network namespaces joined by a veth pair, `llamux rpc-server`
// in one and `llamux serve --rpc` in the other. Needs root and iproute2 (CI installs it); elsewhere the
// tests are skipped with a message saying why.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { type HostPair, type Spawned, makeHostPair, whyNoNamespaces } from "../../scripts/netns.ts";

const root = join(import.meta.dir, "..", "..");
const main = join(root, "src", "main.ts");
const client = join(root, "scripts", "netns-client.ts");
const bun = process.execPath;

const RPC_PORT = 50052;
const SPLIT_PORT = 8000;
const LOCAL_PORT = 8001;

const skipReason = whyNoNamespaces();
if (skipReason) console.warn(`skipping the RPC namespace tests: ${skipReason}`);

let hosts: HostPair;
const spawnIn = (ns: string, args: string[], env: Record<string, string> = {}) => hosts.spawnIn(ns, args, env);

/** Runs the namespace client to its end and returns its last JSON line. */
async function inServeNs(args: string[]): Promise<Record<string, unknown>> {
  const run = spawnIn(serveNs, [bun, client, ...args]);
  await run.proc.exited;
  const lines = run.output().trim().split("\n");
  return JSON.parse(lines.at(-1)!);
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(200);
  }
}

let serveNs: string;

describe.skipIf(skipReason !== undefined)("a model split across network namespaces over RPC", () => {
  let model: string;
  let rpcNs: string;
  let rpcAddress: string;
  let rpcServer: Spawned;
  let splitServer: Spawned;
  let localServer: Spawned;
  const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;
  const serverUp = (port: number) => async () => {
    try {
      return (await inServeNs(["get", url(port, "/v1/models")])).status === 200;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    model = await ensureModel("tiny-llama");
    hosts = makeHostPair("llamux-rpc");
    rpcNs = hosts.a.ns;
    rpcAddress = hosts.a.address;
    serveNs = hosts.b.ns;
    rpcServer = spawnIn(rpcNs, [bun, main, "rpc-server", "--host", rpcAddress, "--port", String(RPC_PORT), "--threads", "1"]);
    await waitFor(() => rpcServer.output().includes("endpoint"), "the RPC server to start");
    splitServer = spawnIn(serveNs, [bun, main, "serve", "--profile", "b", "--port", String(SPLIT_PORT), "--rpc", `${rpcAddress}:${RPC_PORT}`, "--threads", "1", model], { LLAMUX_LOG_LEVEL: "debug" });
    localServer = spawnIn(serveNs, [bun, main, "serve", "--profile", "b", "--port", String(LOCAL_PORT), "--threads", "1", model]);
    await waitFor(serverUp(SPLIT_PORT), "the split server to answer");
    await waitFor(serverUp(LOCAL_PORT), "the local server to answer");
  }, 120_000);

  afterAll(async () => {
    for (const spawned of [splitServer, localServer, rpcServer]) {
      if (!spawned) continue;
      spawned.proc.kill("SIGTERM");
      await spawned.proc.exited;
    }
    hosts?.remove();
  });

  const greedy = JSON.stringify({ model: "m", prompt: "The capital of France is", max_tokens: 24, temperature: 0 });

  test("greedy output over RPC equals a local run's", async () => {
    const body = greedy.replace("\"m\"", JSON.stringify(model));
    const split = await inServeNs(["json", url(SPLIT_PORT, "/v1/completions"), body]);
    const local = await inServeNs(["json", url(LOCAL_PORT, "/v1/completions"), body]);
    expect(split.status).toBe(200);
    expect(local.status).toBe(200);
    const text = (reply: Record<string, unknown>) => (reply.body as { choices: { text: string }[]; usage: { completion_tokens: number } });
    expect(text(split).usage.completion_tokens).toBe(24);
    expect(text(split).choices[0]!.text).toBe(text(local).choices[0]!.text);
  }, 120_000);

  test("both machines hold part of the weights", () => {
    expect(rpcServer.output()).toContain("the RPC protocol has no authentication");
    const log = splitServer.output();
    expect(log).toMatch(/RPC: 1 of 2 layers on RPC0 \(10\.213\./);
    const buffer = (device: RegExp) => Number(log.match(new RegExp(`${device.source} model buffer size =\\s*([\\d.]+) MiB`))?.[1] ?? 0);
    expect(buffer(/RPC0\[?[^ ]*/)).toBeGreaterThan(0);
    expect(buffer(/CPU(?:_Mapped|_REPACK)?/)).toBeGreaterThan(0);
  });

  test("losing the RPC server mid-stream fails the requests in flight and leaves the server up", async () => {
    const body = JSON.stringify({ model, prompt: "Count:", max_tokens: 3000, ignore_eos: true, temperature: 0, stream: true });
    const streaming = spawnIn(serveNs, [bun, client, "stream", url(SPLIT_PORT, "/v1/completions"), body]);
    await waitFor(() => streaming.output().includes("chunk"), "the first streamed tokens");
    rpcServer.proc.kill("SIGKILL");
    await streaming.proc.exited;
    const lines = streaming.output().trim().split("\n");
    const outcome = JSON.parse(lines.at(-1)!);
    // The engine process aborts when its RPC server vanishes; the stream ends with an error event.
    expect(String(outcome.error)).toContain("stopped");
    expect(lines.filter((line) => line === "chunk").length).toBeLessThan(3000);
    expect(await serverUp(SPLIT_PORT)()).toBe(true);
  }, 120_000);
});
