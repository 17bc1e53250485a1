// The listener's guards, in-process through installMiddleware (app.request, no socket): API key,
// CORS, Host check, body limit, request log; plus the serve flags that configure them.
import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { installMiddleware } from "../../src/server/middleware/index.ts";
import { apiKey } from "../../src/server/middleware/api-key.ts";
import { keyOwnerFinder } from "../../src/keys/plain-keys.ts";
import { KeyAccess } from "../../src/keys/key-access.ts";
import { cors } from "../../src/server/middleware/cors.ts";
import { bodyLimit } from "../../src/server/middleware/body-limit.ts";
import { hostCheck } from "../../src/server/middleware/host-check.ts";
import { formatRequestLine } from "../../src/server/middleware/request-log.ts";
import { isLoopbackHost, serverOptions, type ServerOptions } from "../../src/server/server-options.ts";
import { profiles, type ProfileName } from "../../src/server/profiles/index.ts";
import { createApp } from "../../src/server/app.ts";
import type { ModelService } from "../../src/server/model-service.ts";
import { exposureWarnings, serverOptionsFromFlags } from "../../src/cli/server-flags.ts";

const KEY = "sk-test-0123456789";
const render = () => ({});

interface TestApp {
  app: Hono;
  lines: string[];
  aborted: () => boolean;
}

function testApp(options: Partial<ServerOptions> = {}, profile: ProfileName = "a"): TestApp {
  const app = new Hono();
  const lines: string[] = [];
  let aborted = false;
  installMiddleware(app, { profile: profiles[profile], options: serverOptions(options), writeLog: (line) => lines.push(line) });
  for (const path of ["/", "/health", "/ping", "/version", "/api/version", "/lmstudio-greeting", "/metrics"]) {
    app.get(path, (c) => c.text(`open ${path}`));
  }
  app.get("/v1/models", (c) => c.json({ object: "list", data: [] }));
  app.post("/v1/echo", async (c) => c.json({ bytes: (await c.req.arrayBuffer()).byteLength }));
  app.post("/api/blobs/:digest", async (c) => c.json({ bytes: (await c.req.arrayBuffer()).byteLength }));
  app.post("/v1/chat/completions", (c) => {
    c.set("usage", { promptTokens: 7, completionTokens: 3 });
    return c.json({ object: "chat.completion" });
  });
  app.get("/v1/stream", (c) => streamSSE(c, async (stream) => {
    stream.onAbort(() => { aborted = true; });
    for (let i = 0; i < 3; i++) await stream.writeSSE({ data: String(i) });
    c.set("usage", { promptTokens: 5, completionTokens: 3 });
  }));
  app.get("/v1/endless", (c) => streamSSE(c, async (stream) => {
    stream.onAbort(() => { aborted = true; });
    while (!stream.aborted) await stream.writeSSE({ data: "tick" });
  }));
  return { app, lines, aborted: () => aborted };
}

const request = (app: Hono, path: string, init: RequestInit = {}) => app.request(`http://localhost:11434${path}`, init);

describe("apiKey", () => {
  test("accepts any placeholder key, or none, when no key is configured", async () => {
    const { app } = testApp();
    expect((await request(app, "/v1/models", { headers: { Authorization: "Bearer sk-no-key-required" } })).status).toBe(200);
    expect((await request(app, "/v1/models", { headers: { "X-Api-Key": "ollama" } })).status).toBe(200);
    expect((await request(app, "/v1/models")).status).toBe(200);
  });

  test("accepts the key as Bearer token, bare Authorization value or X-Api-Key", async () => {
    const { app } = testApp({ apiKeys: ["other-key", KEY] });
    const variants: Record<string, string>[] = [{ Authorization: `Bearer ${KEY}` }, { authorization: `bearer ${KEY}` }, { Authorization: KEY }, { "X-Api-Key": KEY },
      { Authorization: "Bearer placeholder", "X-Api-Key": KEY }];
    for (const headers of variants) {
      expect((await request(app, "/v1/models", { headers })).status).toBe(200);
    }
  });

  test("refuses a missing key with a hint and a WWW-Authenticate header", async () => {
    const { app } = testApp({ apiKeys: [KEY] }, "c");
    const response = await request(app, "/v1/models");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("X-Api-Key");
  });

  test("refuses a wrong key in each profile's shape", async () => {
    const headers = { Authorization: `Bearer ${KEY}x` };
    const a = await request(testApp({ apiKeys: [KEY] }, "a").app, "/v1/models", { headers });
    expect(a.status).toBe(401);
    expect(await a.json()).toEqual({ error: { message: "Invalid API Key", type: "api_error", param: null, code: null } });
    const b = await request(testApp({ apiKeys: [KEY] }, "b").app, "/v1/models", { headers });
    expect(b.status).toBe(401);
    expect(await b.json()).toEqual({ error: "Unauthorized" });
    const c = await request(testApp({ apiKeys: [KEY] }, "c").app, "/v1/models", { headers });
    expect(c.status).toBe(401);
    expect(await c.json()).toEqual({ error: { message: "Invalid API Key", type: "authentication_error", param: null, code: null } });
  });

  test("refuses a key that only shares a prefix with the real one", async () => {
    const { app } = testApp({ apiKeys: [KEY] });
    expect((await request(app, "/v1/models", { headers: { "X-Api-Key": KEY.slice(0, -1) } })).status).toBe(401);
  });

  test("leaves probes open and guards /metrics unless publicMetrics", async () => {
    const guarded = testApp({ apiKeys: [KEY] }).app;
    for (const path of ["/", "/health", "/ping", "/version", "/api/version", "/lmstudio-greeting"]) {
      const response = await request(guarded, path);
      expect(`${path} ${response.status}`).toBe(`${path} 200`);
    }
    expect((await request(guarded, "/metrics")).status).toBe(401);
    expect((await request(guarded, "/metrics", { headers: { Authorization: `Bearer ${KEY}` } })).status).toBe(200);
    expect((await request(testApp({ apiKeys: [KEY], publicMetrics: true }).app, "/metrics")).status).toBe(200);
  });

  test("guards unknown paths too, so they reveal nothing", async () => {
    expect((await request(testApp({ apiKeys: [KEY] }).app, "/api/tags")).status).toBe(401);
  });

  test("rejects empty or unsendable keys when built", () => {
    expect(() => keyOwnerFinder([])).toThrow(RangeError);
    expect(() => apiKey({ access: new KeyAccess({ plainKeys: [""] }), renderError: render })).toThrow("empty");
    expect(() => apiKey({ access: new KeyAccess({ plainKeys: [" padded"] }), renderError: render })).toThrow(RangeError);
  });
});

describe("cors", () => {
  const preflight = (origin: string, extra: Record<string, string> = {}) => ({
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type", ...extra },
  });

  test("gives a local origin its headers", async () => {
    const response = await request(testApp().app, "/v1/models", { headers: { Origin: "http://localhost:5173" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(response.headers.get("vary")).toContain("Origin");
  });

  test("answers a preflight from an allowed origin, before the key check", async () => {
    const response = await request(testApp({ apiKeys: [KEY] }).app, "/v1/chat/completions",
      preflight("http://127.0.0.1:3000", { "Access-Control-Request-Private-Network": "true" }));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://127.0.0.1:3000");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
    expect(response.headers.get("access-control-allow-private-network")).toBe("true");
  });

  test("refuses another website with 403 and no CORS headers, preflight or simple request", async () => {
    const { app } = testApp({}, "b");
    const refusedPreflight = await request(app, "/v1/chat/completions", preflight("https://evil.example"));
    expect(refusedPreflight.status).toBe(403);
    expect(refusedPreflight.headers.get("access-control-allow-origin")).toBeNull();
    const simple = await request(app, "/v1/chat/completions", { method: "POST", headers: { Origin: "https://evil.example", "Content-Type": "text/plain" }, body: "{}" });
    expect(simple.status).toBe(403);
    expect(simple.headers.get("access-control-allow-origin")).toBeNull();
    const body = (await simple.json()) as { error: { message: string; code: number } };
    expect(body.error.code).toBe(403);
    expect(body.error.message).toContain("--cors-origins");
  });

  test("allows listed origins, wildcards and app shells", async () => {
    const { app } = testApp({ corsOrigins: ["https://app.example", "https://*.example.org"] });
    for (const origin of ["https://app.example", "https://chat.example.org", "vscode-webview://abc123", "app://obsidian.md", "http://[::1]:8080"]) {
      const response = await request(app, "/v1/models", { headers: { Origin: origin } });
      expect(`${origin} ${response.headers.get("access-control-allow-origin")}`).toBe(`${origin} ${origin}`);
    }
    expect((await request(app, "/v1/models", { headers: { Origin: "https://app.example.com" } })).status).toBe(403);
    expect((await request(app, "/v1/models", { headers: { Origin: "null" } })).status).toBe(403);
  });

  test("allows any origin with *", async () => {
    const response = await request(testApp({ corsOrigins: ["*"] }).app, "/v1/models", { headers: { Origin: "https://anything.example" } });
    expect(response.headers.get("access-control-allow-origin")).toBe("https://anything.example");
  });

  test("treats a page of this server reached by a LAN address as same-origin", async () => {
    const { app } = testApp({ bindHost: "0.0.0.0" }, "c");
    const response = await app.request("http://192.168.1.5:1234/v1/models", { headers: { Host: "192.168.1.5:1234", Origin: "http://192.168.1.5:1234" } });
    expect(response.status).toBe(200);
  });

  test("adds its headers to a 401 so a browser client can read it", async () => {
    const response = await request(testApp({ apiKeys: [KEY] }).app, "/v1/models", { headers: { Origin: "http://localhost:5173" } });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  test("sends no CORS headers when there is no Origin", async () => {
    const response = await request(testApp().app, "/v1/models");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("rejects an origin with a path when built", () => {
    expect(() => cors({ origins: ["https://app.example/"], renderError: render })).toThrow("no path");
  });
});

describe("hostCheck", () => {
  test("refuses a foreign Host while bound to loopback, with a clear message", async () => {
    const { app } = testApp({ bindHost: "127.0.0.1" });
    for (const host of ["evil.example", "evil.example:11434", "evil.example@localhost", "localhost.evil.example"]) {
      const response = await request(app, "/v1/models", { headers: { Host: host } });
      expect(`${host} ${response.status}`).toBe(`${host} 403`);
    }
    const body = (await (await request(app, "/", { headers: { Host: "evil.example" } })).json()) as { error: { message: string } };
    expect(body.error.message).toContain("DNS rebinding");
  });

  test("lets loopback names through on any port", async () => {
    const { app } = testApp({ bindHost: "127.0.0.1" });
    for (const host of ["localhost:11434", "localhost", "127.0.0.1:8000", "[::1]:1234", "app.localhost:1234"]) {
      const response = await request(app, "/v1/models", { headers: { Host: host } });
      expect(`${host} ${response.status}`).toBe(`${host} 200`);
    }
  });

  test("is off when bound to a non-loopback address", async () => {
    const response = await request(testApp({ bindHost: "0.0.0.0" }).app, "/v1/models", { headers: { Host: "evil.example" } });
    expect(response.status).toBe(200);
  });

  test("rejects a missing bind address when built", () => {
    expect(() => hostCheck({ bindHost: "", renderError: render })).toThrow(RangeError);
  });
});

describe("bodyLimit", () => {
  const post = (app: Hono, body: string | ReadableStream<Uint8Array>) => request(app, "/v1/echo", { method: "POST", body, headers: { "Content-Type": "application/json" } });

  test("passes a body within the limit", async () => {
    const response = await post(testApp({ bodyLimitBytes: 1024 }).app, "x".repeat(1024));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ bytes: 1024 });
  });

  test("answers a larger body with 413 in the profile's shape", async () => {
    const response = await post(testApp({ bodyLimitBytes: 1024 }, "b").app, "x".repeat(1025));
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { message: string; code: number } };
    expect(body.error.code).toBe(413);
    expect(body.error.message).toContain("1024 bytes");
  });

  test("counts a chunked body that has no Content-Length", async () => {
    const chunks = () => new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(512));
        controller.close();
      },
    });
    const app = testApp({ bodyLimitBytes: 1024 }, "c").app;
    const response = await post(app, chunks());
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    expect((await post(testApp({ bodyLimitBytes: 4096 }).app, chunks())).status).toBe(200);
  });

  test("does not limit blob uploads: model files are gigabytes, and the store checks their digest", async () => {
    const response = await request(testApp({ bodyLimitBytes: 1024 }).app, `/api/blobs/sha256:${"0".repeat(64)}`, { method: "POST", body: "x".repeat(4096) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ bytes: 4096 });
  });

  test("rejects a limit that is not a positive integer when built", () => {
    expect(() => bodyLimit({ maxBytes: 0, renderError: render })).toThrow(RangeError);
    expect(() => bodyLimit({ maxBytes: 1.5, renderError: render })).toThrow(RangeError);
  });
});

describe("requestLog", () => {
  const linePattern = /^GET \/v1\/models 200 \d+\.\d ms$/;

  test("writes method, path, status and latency", async () => {
    const { app, lines } = testApp();
    await request(app, "/v1/models");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(linePattern);
  });

  test("adds the token counts a route reported", async () => {
    const { app, lines } = testApp();
    await request(app, "/v1/chat/completions", { method: "POST", body: "{}" });
    expect(lines[0]).toMatch(/^POST \/v1\/chat\/completions 200 \d+\.\d ms prompt_tokens=7 completion_tokens=3$/);
  });

  test("logs refusals too", async () => {
    const { app, lines } = testApp({ apiKeys: [KEY] });
    await request(app, "/v1/models");
    await request(app, "/v1/models", { headers: { Host: "evil.example" } });
    expect(lines.map((line) => line.split(" ").slice(0, 3).join(" "))).toEqual(["GET /v1/models 401", "GET /v1/models 403"]);
  });

  test("logs a stream when it ends, with the counts set during streaming", async () => {
    const { app, lines } = testApp();
    const response = await request(app, "/v1/stream");
    expect(lines).toHaveLength(0);
    expect(await response.text()).toBe("data: 0\n\ndata: 1\n\ndata: 2\n\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^GET \/v1\/stream 200 \d+\.\d ms stream prompt_tokens=5 completion_tokens=3$/);
  });

  test("passes a client's disconnect on to the route and logs it", async () => {
    const { app, lines, aborted } = testApp();
    const response = await request(app, "/v1/endless");
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await Bun.sleep(10);
    expect(aborted()).toBe(true);
    expect(lines[0]).toMatch(/^GET \/v1\/endless 200 \d+\.\d ms stream cancelled by client$/);
  });

  test("formatRequestLine puts the parts in a fixed order", () => {
    expect(formatRequestLine({ method: "POST", path: "/api/chat", status: 200, latencyMs: 12.345, stream: "completed", usage: { promptTokens: 1, completionTokens: 2 } }))
      .toBe("POST /api/chat 200 12.3 ms stream prompt_tokens=1 completion_tokens=2");
  });
});

describe("createApp", () => {
  test("installs the guards before the routes", async () => {
    const app = createApp({ profile: profiles.b, models: {} as ModelService }, serverOptions({ apiKeys: [KEY] }));
    const response = await app.request("http://localhost:8000/v1/models");
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "Unauthorized" });
  });
});

describe("serve flags", () => {
  test("take keys from the flag, then LLAMUX_API_KEY, then VLLM_API_KEY for profile b only", () => {
    const env = { LLAMUX_API_KEY: "", VLLM_API_KEY: "vllm-key" };
    expect(serverOptionsFromFlags({ "api-key": ["a", "b"] }, "b", "127.0.0.1", env).apiKeys).toEqual(["a", "b"]);
    expect(serverOptionsFromFlags({}, "b", "127.0.0.1", env).apiKeys).toEqual(["vllm-key"]);
    expect(serverOptionsFromFlags({}, "a", "127.0.0.1", env).apiKeys).toEqual([]);
    expect(serverOptionsFromFlags({}, "a", "127.0.0.1", { ...env, LLAMUX_API_KEY: "own" }).apiKeys).toEqual(["own"]);
    expect(() => serverOptionsFromFlags({ "api-key": [""] }, "a", "127.0.0.1", {})).toThrow("--api-key");
  });

  test("merge --cors-origins and vLLM's JSON --allowed-origins", () => {
    const options = serverOptionsFromFlags({ "cors-origins": "https://a.example, https://b.example", "allowed-origins": '["https://c.example"]', "public-metrics": true }, "b", "::1", {});
    expect(options.corsOrigins).toEqual(["https://a.example", "https://b.example", "https://c.example"]);
    expect(options.publicMetrics).toBe(true);
    expect(() => serverOptionsFromFlags({ "allowed-origins": "https://c.example" }, "b", "::1", {})).toThrow("JSON list");
  });

  test("warn when exposed without a key or open to every origin", () => {
    expect(exposureWarnings(serverOptions({ bindHost: "0.0.0.0" }))[0]).toContain("without an API key");
    expect(exposureWarnings(serverOptions({ bindHost: "0.0.0.0", apiKeys: [KEY] }))).toEqual([]);
    expect(exposureWarnings(serverOptions({ bindHost: "127.0.0.1" }))).toEqual([]);
    expect(exposureWarnings(serverOptions({ corsOrigins: ["*"] }))[0]).toContain("any website");
  });

  test("isLoopbackHost knows loopback names and addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST.", "::1", "[::1]", "app.localhost"]) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "localhost.evil.example", "128.0.0.1"]) expect(isLoopbackHost(host)).toBe(false);
  });
});
