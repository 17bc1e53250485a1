// The listener against clients that misbehave on the socket, through a real `llamux serve` and raw TCP:
// uploads that stall after one byte are closed after --idle-timeout, while a generation that is
// silent for longer than that (a non-streamed answer, a stream queued behind another) is never cut;
// HTTP/1.0 without a Host header gets a 400; every answer forbids framing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";
import { listen } from "../../src/server/listener.ts";
import { profiles } from "../../src/server/profiles/index.ts";

let server: RunningServer;
let vllm: RunningServer;
let model: string;

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
  [server, vllm] = await Promise.all([
    startServer([model, "--profile", "a", "--idle-timeout", "1", "--parallel", "1", "--threads", "1"]),
    startServer([model, "--profile", "b", "--idle-timeout", "1"]),
  ]);
}, 120_000);
afterAll(() => Promise.all([server?.stop(), vllm?.stop()]));

interface RawExchange {
  socket: Socket;
  /** Resolves with what the server sent once it closes the connection. */
  closed: Promise<string>;
}

function rawSend(port: number, payload: string): RawExchange {
  const socket = connect(port, "127.0.0.1");
  socket.write(payload);
  let received = "";
  socket.on("data", (data) => (received += data.toString("latin1")));
  const closed = new Promise<string>((resolve) => {
    socket.on("close", () => resolve(received));
    socket.on("error", () => {});
  });
  return { socket, closed };
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, Bun.sleep(ms).then(() => { throw new Error(`not settled within ${ms} ms`); })]);

// First, while profile b still loads the model it was started with.
test("a storm of 40 clients that leave early (while the model loads, queued, or streaming) leaves no work behind", async () => {
  const storm = Array.from({ length: 40 }, async (_, i) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30 + ((i * 37) % 900));
    const response = await fetch(`${vllm.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "Content-Type": "application/json" }, signal: controller.signal,
      body: JSON.stringify({ model: "", messages: [{ role: "user", content: `Story ${i}` }], max_tokens: 400, stream: i % 2 === 0 }),
    }).catch(() => undefined);
    await response?.text().catch(() => undefined);
  });
  await Promise.all(storm);
  // Every abandoned request is cancelled: none runs or waits a moment later (before, those that left
  // while the model loaded ran to their 400 tokens, 4 at a time).
  const counts = async () => {
    const metrics = await (await fetch(`${vllm.baseUrl}/metrics`)).text();
    return [...metrics.matchAll(/^vllm:num_requests_(?:running|waiting)\{[^}]*\} (\d+)/gm)].map((m) => Number(m[1]));
  };
  // The counts appear once the model has loaded; then the abandoned requests must be gone within seconds
  // and stay gone: a request the server took up just before it saw its client leave may show for a step,
  // while one left generating (the bug this guards against) runs for seconds.
  const loaded = Date.now() + 30_000;
  while ((await counts()).length === 0 && Date.now() < loaded) await Bun.sleep(100);
  const busy = async () => (await counts()).reduce((sum, n) => sum + n, 0);
  const deadline = Date.now() + 5_000;
  let idleSince: number | undefined;
  const readings: number[] = [];
  while (Date.now() < deadline && (idleSince === undefined || Date.now() - idleSince < 1_000)) {
    const now = await busy();
    readings.push(now);
    idleSince = now > 0 ? undefined : (idleSince ?? Date.now());
    await Bun.sleep(100);
  }
  // idle for a whole second, with no request coming back after it
  expect({ idleForASecond: idleSince !== undefined && Date.now() - idleSince >= 1_000, readings }).toMatchObject({ idleForASecond: true });
  expect(await busy()).toBe(0);
  const answer = await fetch(`${vllm.baseUrl}/v1/chat/completions`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "", messages: [{ role: "user", content: "Hi" }], max_tokens: 4 }),
  });
  expect(answer.status).toBe(200);
}, 60_000);

test("200 uploads that stall after one byte are all closed after the idle timeout", async () => {
  const started = performance.now();
  const stalled = Array.from({ length: 200 }, () =>
    rawSend(server.port, "POST /api/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"));
  const answers = await within(Promise.all(stalled.map((s) => s.closed)), 8_000);
  expect(answers).toHaveLength(200);
  expect(performance.now() - started).toBeGreaterThan(900);
  // The server still answers.
  expect((await fetch(`${server.baseUrl}/api/version`)).status).toBe(200);
}, 20_000);

// The next three mostly wait for timeouts and gaps of seconds; they run side by side (the third has a
// listener of its own, the first two use no sequence the other needs).
test.concurrent("a keep-alive connection left idle is closed; headers that never end are too", async () => {
  // Bun's timers tick in steps of a few seconds, and it gives headers 10 s of its own.
  const idle = rawSend(server.port, "GET /api/version HTTP/1.1\r\nHost: localhost\r\n\r\n");
  const partial = rawSend(server.port, "GET /api/version HTTP/1.1\r\nHost: loc");
  expect(await within(idle.closed, 10_000)).toContain("200 OK");
  expect(await within(partial.closed, 20_000)).toBe("");
}, 30_000);

test.concurrent("a generation silent for longer than the idle timeout is not cut, streamed or not", async () => {
  const body = (stream: boolean, numPredict: number) => JSON.stringify({
    model, prompt: "Once upon a time", stream, options: { num_predict: numPredict, temperature: 0, ignore_eos: true },
  });
  // One sequence at a time: the streamed request waits silently in the queue behind the long one.
  const started = performance.now();
  const long = fetch(`${server.baseUrl}/api/generate`, { method: "POST", body: body(false, 600) });
  await Bun.sleep(100);
  const streamed = fetch(`${server.baseUrl}/api/generate`, { method: "POST", body: body(true, 4) });
  const longAnswer = await long;
  const longBody = (await longAnswer.json()) as { eval_count: number; done: boolean };
  const silentMs = performance.now() - started;
  const streamedText = await (await streamed).text();
  expect(longAnswer.status).toBe(200);
  expect(longBody.done).toBe(true);
  expect(longBody.eval_count).toBe(600);
  if (silentMs < 6_000) console.warn(`the long generation took only ${silentMs.toFixed(0)} ms: the listener test below covers longer silences`);
  const lines = streamedText.trim().split("\n").map((line) => JSON.parse(line) as { done: boolean });
  expect(lines.at(-1)!.done).toBe(true);
}, 120_000);

test.concurrent("the listener keeps a silent answer and a stream with long gaps open, and closes a stalled body", async () => {
  // Bun checks timeouts every few seconds: gaps of 6 s would be cut under a 1 s idle timeout.
  const gapMs = 6_000;
  const bound = listen({
    profile: profiles.b, hostname: "127.0.0.1", port: 0, idleTimeoutSeconds: 1,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/silent") {
        const body = await request.text();
        await Bun.sleep(gapMs);
        return Response.json({ received: body.length });
      }
      let n = 0;
      return new Response(new ReadableStream({
        async pull(controller) {
          await Bun.sleep(gapMs / 2);
          controller.enqueue(new TextEncoder().encode(`${JSON.stringify({ n })}\n`));
          if (++n === 3) controller.close();
        },
      }), { headers: { "content-type": "application/x-ndjson" } });
    },
  });
  try {
    const base = `http://127.0.0.1:${bound.port}`;
    // a body that stalls, while the others wait out their gaps
    const stalled = within(rawSend(bound.port!, "POST /silent HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nab").closed, 8_000);
    const [silent, stream] = await Promise.all([
      fetch(`${base}/silent`, { method: "POST", body: "abc" }).then((r) => r.json()),
      fetch(`${base}/stream`).then((r) => r.text()),
    ]);
    expect(silent).toEqual({ received: 3 });
    expect(stream.trim().split("\n")).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    expect(await stalled).toBe("");
  } finally {
    bound.stop(true);
  }
}, 30_000);

test("HTTP/1.0 without a Host header gets a 400 in the profile's shape, not a 500", async () => {
  const ollama = await within(rawSend(server.port, "GET /api/tags HTTP/1.0\r\n\r\n").closed, 5_000);
  expect(ollama).toStartWith("HTTP/1.1 400");
  expect(JSON.parse(ollama.slice(ollama.indexOf("\r\n\r\n") + 4))).toEqual({ error: expect.stringContaining("Host header") });
  const openAi = await within(rawSend(vllm.port, "POST /v1/chat/completions HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}").closed, 5_000);
  expect(openAi).toStartWith("HTTP/1.1 400");
  const error = JSON.parse(openAi.slice(openAi.indexOf("\r\n\r\n") + 4)) as { error: { message: string; code: number } };
  expect(error.error.code).toBe(400);
  expect(error.error.message).toContain("Host header");
  // With a Host header, HTTP/1.0 is served.
  const served = await within(rawSend(server.port, "GET /api/version HTTP/1.0\r\nHost: localhost\r\n\r\n").closed, 5_000);
  expect(served).toStartWith("HTTP/1.1 200");
});

test("every answer forbids framing; the web UI page has a policy that fits it", async () => {
  for (const path of ["/api/version", "/api/tags", "/no/such/route", "/ui"]) {
    const response = await fetch(`${server.baseUrl}${path}`);
    await response.arrayBuffer();
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  }
  const page = await fetch(`${server.baseUrl}/ui`);
  expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  const refused = await fetch(`${server.baseUrl}/api/tags`, { headers: { host: "evil.example" } });
  expect(refused.status).toBe(403);
  expect(refused.headers.get("x-frame-options")).toBe("DENY");
});

test("--idle-timeout and --max-body-size refuse values out of range", () => {
  const main = new URL("../../src/main.ts", import.meta.url).pathname;
  for (const args of [["--idle-timeout", "0"], ["--idle-timeout", "256"], ["--max-body-size", "x"]]) {
    const run = Bun.spawnSync([process.execPath, main, "serve", ...args, "--port", "1"], { stderr: "pipe" });
    expect(run.exitCode).toBe(2);
    expect(run.stderr.toString()).toContain(args[0]!);
  }
});
