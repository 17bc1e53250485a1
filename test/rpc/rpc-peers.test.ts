// RPC servers that misbehave (issue 31), on loopback: llamux probes each before llama.cpp's RPC back end
// (which has no time limits and aborts the engine on a malformed answer) talks to it, and answers a 503
// (cannot be reached, no answer) or a 502 (out of protocol) that names the server; the server goes on.
// A real `llamux rpc-server` on loopback serves a split model, and losing it mid-stream is a 502 too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { MAX_RPC_DEVICES, probeRpcServer } from "../../src/engine/rpc-probe.ts";
import { rpcJoinTimeoutMs, rpcProbeTimeoutMs } from "../../src/config.ts";
import { freePort, startServer, type RunningServer } from "../server/serve-fixture.ts";
import { closedPort, fakeRpcPeer, type FakePeer } from "./fake-rpc-peer.ts";

const peers: FakePeer[] = [];
const peer = async (...behaviours: Parameters<typeof fakeRpcPeer>) => {
  const made = await fakeRpcPeer(...behaviours);
  peers.push(made);
  return made;
};
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
});

/** The EngineError a probe rejects with, as {code, message}. */
const refusal = (endpoint: string, timeoutMs?: number) => probeRpcServer(endpoint, timeoutMs).then(
  () => ({ code: "none", message: "" }),
  (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
);

// Most of these wait out a time limit with nothing to do: each test has a peer and a server of its own, so
// they run side by side, and the limits are short ones (1 s for the probe alone; 2 s for the servers, set by
// the variables, since a server waits its probe limit at start-up and again for each request, and its join
// limit at start-up and for the request). The defaults, 5 s and 15 s, are checked as values.
describe("the probe", () => {
  test.concurrent("a peer that accepts and never answers: 503-worthy, within the time limit", async () => {
    const { endpoint } = await peer("silent");
    const { code, message } = await refusal(endpoint, 1_000);
    expect(code).toBe("rpc_unavailable");
    expect(message).toStartWith(`RPC server "${endpoint}" accepted the connection but did not answer the protocol's HELLO within 1 s`);
  });

  test.concurrent("nothing listening, a hang-up, garbage, an old protocol, 2^32-1 devices", async () => {
    const refused = await closedPort();
    expect(await refusal(refused)).toEqual({ code: "rpc_unavailable", message: `RPC server "${refused}" cannot be reached: connection refused (is "llamux rpc-server" running there?)` });
    const hangUp = await peer("hang-up");
    expect(await refusal(hangUp.endpoint)).toMatchObject({ code: "rpc_failure" });
    const garbage = await peer("garbage");
    expect((await refusal(garbage.endpoint)).message).toContain("answered the protocol's HELLO with 5 bytes where the protocol has 28");
    const old = await peer("old-protocol");
    expect((await refusal(old.endpoint)).message).toContain("speaks RPC protocol 3.0.0, this llama.cpp 7.0");
    const many = await peer("many-devices");
    expect(await refusal(many.endpoint)).toEqual({
      code: "rpc_failure",
      message: `RPC server "${many.endpoint}" claims 4294967295 devices, more than the ${MAX_RPC_DEVICES} llamux accepts from one server; llama.cpp's RPC back end would end the engine on it, so it is not used`,
    });
    expect((await refusal("[::1]:50052")).message).toContain("takes HOST:PORT with a host name or an IPv4 address");
  });

  test.concurrent("a peer that answers properly passes, with its device count", async () => {
    expect(await probeRpcServer((await peer("probe-only")).endpoint)).toBe(1);
  });

  test("the limits are 5 s and 15 s unless set; a value that is not seconds is refused by name", () => {
    expect([rpcProbeTimeoutMs({}), rpcJoinTimeoutMs({})]).toEqual([5_000, 15_000]);
    expect([rpcProbeTimeoutMs({ LLAMUX_RPC_PROBE_TIMEOUT: "0.5" }), rpcJoinTimeoutMs({ LLAMUX_RPC_JOIN_TIMEOUT: "2" })]).toEqual([500, 2_000]);
    expect(() => rpcJoinTimeoutMs({ LLAMUX_RPC_JOIN_TIMEOUT: "0" })).toThrow('Cannot use LLAMUX_RPC_JOIN_TIMEOUT="0": expected seconds');
    expect(() => rpcProbeTimeoutMs({ LLAMUX_RPC_PROBE_TIMEOUT: "5s" })).toThrow('Cannot use LLAMUX_RPC_PROBE_TIMEOUT="5s": expected seconds');
  });
});

describe("llamux serve --rpc with a misbehaving peer", () => {
  let model: string;
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    model = await ensureModel("tiny-llama");
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  const limits = { LLAMUX_RPC_PROBE_TIMEOUT: "2", LLAMUX_RPC_JOIN_TIMEOUT: "2" };
  const serveWith = async (endpoint: string) => {
    const server = await startServer(["--profile", "b", model, "--rpc", endpoint, "--threads", "1", "--ctx-size", "256"], limits);
    servers.push(server);
    return server;
  };
  const complete = async (server: RunningServer) => {
    const response = await fetch(`${server.baseUrl}/v1/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model, prompt: "Hi", max_tokens: 2 }) });
    return { status: response.status, message: ((await response.json()) as { error?: { message: string } }).error?.message ?? "" };
  };

  for (const [behaviour, status, says] of [
    ["silent", 503, "accepted the connection but did not answer the protocol's HELLO within 2 s"],
    ["many-devices", 502, "claims 4294967295 devices"],
    ["garbage", 502, "answered the protocol's HELLO with 5 bytes"],
  ] as const) {
    test.concurrent(`${behaviour}: every request is a ${status} naming the RPC server; the server stays up`, async () => {
      const { endpoint } = await peer(behaviour);
      const server = await serveWith(endpoint);
      for (let i = 0; i < 2; i++) {
        const answer = await complete(server);
        expect(answer.status).toBe(status);
        expect(answer.message).toContain(`RPC server "${endpoint}" ${says}`);
      }
      expect((await fetch(`${server.baseUrl}/v1/models`)).status).toBe(200);
    }, 60_000);
  }

  test.concurrent("profile a: a peer that cannot be reached is a 503 that names it, not Ollama's 'server busy'", async () => {
    const endpoint = await closedPort();
    const server = await startServer(["--profile", "a", model, "--served-model-name", "split", "--rpc", endpoint, "--threads", "1", "--ctx-size", "256"]);
    servers.push(server);
    const answer = await fetch(`${server.baseUrl}/api/generate`, { method: "POST", body: JSON.stringify({ model: "split", prompt: "Hi", stream: false, options: { num_predict: 2 } }) });
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: string }).error).toBe(`RPC server "${endpoint}" cannot be reached: connection refused (is "llamux rpc-server" running there?)`);
  }, 60_000);

  test.concurrent("a limit that is not seconds stops start-up, naming the variable", async () => {
    const endpoint = await closedPort();
    for (const name of ["LLAMUX_RPC_PROBE_TIMEOUT", "LLAMUX_RPC_JOIN_TIMEOUT"]) {
      await expect(startServer(["--profile", "b", model, "--rpc", endpoint], { [name]: "soon" })).rejects.toThrow(`Cannot use ${name}="soon": expected seconds`);
    }
  }, 60_000);

  test.concurrent("a peer that answers the probe and then not llama.cpp's back end: a 503 once the join time runs out", async () => {
    // every load makes two connections: the probe's, then the back end's
    const { endpoint } = await peer("probe-only", "silent");
    const server = await serveWith(endpoint);
    const answer = await complete(server);
    expect(answer.status).toBe(503);
    expect(answer.message).toContain(`llama.cpp's RPC back end did not finish joining "${endpoint}" within 2 s`);
    expect((await fetch(`${server.baseUrl}/v1/models`)).status).toBe(200);
  }, 90_000);
});

describe("a real llamux rpc-server on loopback", () => {
  const main = join(import.meta.dir, "..", "..", "src", "main.ts");
  let rpc: ReturnType<typeof Bun.spawn> | undefined;
  let server: RunningServer | undefined;
  afterAll(async () => {
    rpc?.kill("SIGKILL");
    await server?.stop();
  });

  test("serves part of the model; losing it mid-stream is a 502 naming it, and the next request a 503", async () => {
    const model = await ensureModel("tiny-llama");
    const port = await freePort();
    const endpoint = `127.0.0.1:${port}`;
    rpc = Bun.spawn([process.execPath, main, "rpc-server", "--host", "127.0.0.1", "--port", String(port), "--threads", "1"], { stdout: "pipe", stderr: "pipe" });
    // the RPC server listens once it says so
    const reader = (rpc.stdout as ReadableStream<Uint8Array>).getReader();
    let said = "";
    while (!said.includes("endpoint")) said += new TextDecoder().decode((await reader.read()).value ?? new Uint8Array());
    server = await startServer(["--profile", "b", model, "--rpc", endpoint, "--threads", "1", "--ctx-size", "2048", "--parallel", "1"]);
    const response = await fetch(`${server.baseUrl}/v1/completions`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model, prompt: "Count:", max_tokens: 2000, ignore_eos: true, stream: true }),
    });
    expect(response.status).toBe(200);
    const stream = response.body!.getReader();
    let text = new TextDecoder().decode((await stream.read()).value);
    rpc.kill("SIGKILL");
    for (;;) {
      const { done, value } = await stream.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain(`RPC server it uses (\\"${endpoint}\\") disconnects or answers out of protocol`);
    expect(text).toContain(`"code":502`);
    const next = await fetch(`${server.baseUrl}/v1/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model, prompt: "Hi", max_tokens: 2 }) });
    expect(next.status).toBe(503);
    expect(((await next.json()) as { error: { message: string } }).error.message).toContain(`RPC server "${endpoint}" cannot be reached: connection refused`);
  }, 120_000);
});
