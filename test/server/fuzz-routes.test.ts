// Property-based fuzzing (fast-check) of every route that takes a body, on the three profiles, through
// real `llamux serve` processes with a real model: malformed JSON, arbitrary JSON values, and valid
// requests with one field replaced by an arbitrary value. Every answer must come within a deadline
// (no hang), be below 500 (no server error), and the servers must stay up (no crash).
//
// Fields whose bounds another part of the work owns (token ids, templates, grammars and schemas,
// context sizes) are left out of the mutations here; their own fuzz tests cover them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

type Profile = "a" | "b" | "c";

interface Route {
  method: "POST" | "DELETE";
  path: string;
  /** A request the route accepts: mutations start from it. */
  valid: (model: string) => Record<string, unknown>;
  /** Reaches a registry or hub (closed ports here): that it cannot be reached may be a 5xx, as in Ollama. */
  upstream?: boolean;
}

const chatMessages = [{ role: "user", content: "Hi" }];
const OPENAI_ROUTES: Route[] = [
  { method: "POST", path: "/v1/chat/completions", valid: (model) => ({ model, messages: chatMessages, max_tokens: 2 }) },
  { method: "POST", path: "/v1/completions", valid: (model) => ({ model, prompt: "Hi", max_tokens: 2 }) },
  { method: "POST", path: "/v1/embeddings", valid: (model) => ({ model, input: "Hi" }) },
  { method: "POST", path: "/v1/responses", valid: (model) => ({ model, input: "Hi", max_output_tokens: 2 }) },
  { method: "POST", path: "/v1/messages", valid: (model) => ({ model, messages: chatMessages, max_tokens: 2 }) },
  { method: "POST", path: "/v1/messages/count_tokens", valid: (model) => ({ model, messages: chatMessages }) },
  { method: "POST", path: "/api/v1/models/delete", valid: () => ({ model: "not-stored" }) },
];
const ROUTES: Record<Profile, Route[]> = {
  a: [
    ...OPENAI_ROUTES,
    { method: "POST", path: "/api/generate", valid: (model) => ({ model, prompt: "Hi", stream: false, options: { num_predict: 2 } }) },
    { method: "POST", path: "/api/chat", valid: (model) => ({ model, messages: chatMessages, stream: false, options: { num_predict: 2 } }) },
    { method: "POST", path: "/api/embed", valid: (model) => ({ model, input: "Hi" }) },
    { method: "POST", path: "/api/embeddings", valid: (model) => ({ model, prompt: "Hi" }) },
    { method: "POST", path: "/v1/systemone", valid: (model) => ({ model, state: "Hi", questions: { q: { type: "noul", instructions: "Fine?" } } }) },
    { method: "POST", path: "/api/show", valid: (model) => ({ model }) },
    { method: "POST", path: "/api/create", valid: () => ({ model: "fuzzed", from: "not-stored", stream: false }) },
    { method: "POST", path: "/api/copy", valid: () => ({ source: "not-stored", destination: "fuzzed" }) },
    { method: "DELETE", path: "/api/delete", valid: () => ({ model: "not-stored" }) },
    { method: "POST", path: "/api/pull", valid: () => ({ model: "library/not-there", stream: false }), upstream: true },
    { method: "POST", path: "/api/push", valid: () => ({ model: "alice/not-there", stream: false }) },
  ],
  b: [
    ...OPENAI_ROUTES,
    { method: "POST", path: "/tokenize", valid: (model) => ({ model, prompt: "Hi" }) },
    { method: "POST", path: "/detokenize", valid: (model) => ({ model, tokens: [1, 2] }) },
  ],
  c: [
    ...OPENAI_ROUTES,
    { method: "POST", path: "/api/v0/chat/completions", valid: (model) => ({ model, messages: chatMessages, max_tokens: 2 }) },
    { method: "POST", path: "/api/v0/completions", valid: (model) => ({ model, prompt: "Hi", max_tokens: 2 }) },
    { method: "POST", path: "/api/v0/embeddings", valid: (model) => ({ model, input: "Hi" }) },
    { method: "POST", path: "/api/v1/chat", valid: (model) => ({ model, input: "Hi", max_output_tokens: 2 }) },
    { method: "POST", path: "/api/v1/models/load", valid: () => ({ model: "not-stored" }) },
    { method: "POST", path: "/api/v1/models/unload", valid: () => ({ instance_id: "not-loaded" }) },
    { method: "POST", path: "/api/v1/models/download", valid: () => ({ model: "org/not-there" }), upstream: true },
  ],
};

/** Context sizes: a valid one loads another engine per value (their bounds have tests of their own). */
const LEFT_OUT = new Set([
  "num_ctx", "context_length", "options",
]);
const DEADLINE_MS = 30_000;
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

const servers: Partial<Record<Profile, RunningServer>> = {};
let storeDir: string;
let model: string;

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
  storeDir = mkdtempSync(join(tmpdir(), "llamux-fuzz-"));
  // Pulls and downloads go nowhere: the registry and the hub are closed ports.
  const env = { LLAMUX_MODELS: storeDir, OLLAMA_REGISTRY: "http://127.0.0.1:9", HF_ENDPOINT: "http://127.0.0.1:9" };
  const common = [model, "--ctx-size", "256", "--parallel", "2", "--threads", "1", "--served-model-name", "fuzz"];
  const started = await Promise.all((["a", "b", "c"] as const).map((profile) => startServer([...common, "--profile", profile], env)));
  [servers.a, servers.b, servers.c] = started;
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  rmSync(storeDir, { recursive: true, force: true });
});

type Body = { kind: "text"; text: string } | { kind: "json"; value: unknown };

/** Bodies that are not JSON, JSON that is not an object, objects of the wrong shape, and valid requests with one field replaced. */
function bodies(route: Route): fc.Arbitrary<Body> {
  const valid = route.valid("fuzz");
  const fields = Object.keys(valid).filter((key) => !LEFT_OUT.has(key));
  const mutated = fc.record({
    field: fc.constantFrom(...fields, "model", "stream", "max_tokens", "messages", "input", "temperature", "seed", "n", "stop", "keep_alive", "images"),
    value: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(null, -1, 0, 1e308, -1e308, 2 ** 53, "", "\u0000", "x".repeat(10_000), [], {}, [[[]]], true)),
  }).map(({ field, value }): Body => ({ kind: "json", value: { ...valid, [field]: value } }));
  return fc.oneof(
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((text): Body => ({ kind: "text", text })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value): Body => ({ kind: "json", value })) },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...fields, "model", "messages", "prompt", "input"), fc.jsonValue({ maxDepth: 3 })).map((value): Body => ({ kind: "json", value })) },
    { weight: 4, arbitrary: mutated },
  );
}

const CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""];

async function send(server: RunningServer, route: Route, body: Body, contentType = "application/json"): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.baseUrl}${route.path}`, {
    method: route.method,
    headers: contentType ? { "Content-Type": contentType } : {},
    body: body.kind === "text" ? body.text : JSON.stringify(body.value),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  // A streamed answer must end too: read it whole within the deadline.
  return { status: response.status, text: await response.text() };
}

for (const profile of ["a", "b", "c"] as const) {
  test(`profile ${profile}: malformed bodies on every route get an answer below 500 and the server stays up`, async () => {
    const server = servers[profile]!;
    const statuses = new Map<number, number>();
    const cases = fc.oneof(...ROUTES[profile].map((route) => bodies(route).map((body) => ({ route, body }))));
    await fc.assert(
      fc.asyncProperty(cases, fc.constantFrom(...CONTENT_TYPES), async ({ route, body }, contentType) => {
        const { status, text } = await send(server, route, body, contentType);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        const unreachable = route.upstream && /ECONNREFUSED|Unable to connect/.test(text);
        // Ollama refuses embeddings from a chat model with a 501, and clients match its words
        const ollamaRefusal = status === 501 && text.includes("does not support embeddings");
        if (status >= 500 && !unreachable && !ollamaRefusal) throw new Error(`${route.method} ${route.path} answered ${status}: ${text.slice(0, 300)}`);
        // A stream that started well may only report errors in its own shape, never a server error.
        expect(text).not.toMatch(/"(code|status)":\s*5\d\d\b/);
      }),
      { numRuns: RUNS * ROUTES[profile].length, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: false },
    );
    // Not vacuous: many requests were sent, and some were accepted (they reached the engine).
    const sent = [...statuses.values()].reduce((a, b) => a + b, 0);
    expect(sent).toBeGreaterThanOrEqual(Math.min(100, RUNS * ROUTES[profile].length));
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    console.log(`profile ${profile}: ${sent} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    // Still up, and still generating.
    const probe = await send(server, ROUTES[profile][0]!, { kind: "json", value: ROUTES[profile][0]!.valid("fuzz") });
    expect(probe.status).toBe(200);
  }, 120_000);
}

/** Routes without a body, with hostile path parameters and query strings. */
const GET_PATHS: Record<Profile, string[]> = {
  a: ["/api/tags", "/api/ps", "/api/version", "/api/blobs/", "/v1/models/", "/api/v1/server/requests?after=", "/ui/"],
  b: ["/health", "/version", "/metrics", "/v1/models/", "/api/v1/server/requests?after="],
  c: ["/api/v0/models/", "/api/v1/models", "/api/v1/models/download/status/", "/v1/models/", "/lmstudio-greeting", "/api/v1/server/requests?after="],
};

for (const profile of ["a", "b", "c"] as const) {
  test(`profile ${profile}: hostile paths and query strings on routes without a body get an answer below 500`, async () => {
    const server = servers[profile]!;
    const suffix = fc.oneof(
      fc.string({ maxLength: 80 }).map((text) => encodeURIComponent(text)),
      fc.constantFrom("%", "%00", "%ff%fe", "..%2f..%2fetc%2fpasswd", "a/b/c/d", "-1", "1e400", "NaN", "x".repeat(5000), "sha256:" + "g".repeat(64)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...GET_PATHS[profile]), suffix, fc.constantFrom("GET", "HEAD"), async (path, tail, method) => {
        const response = await fetch(`${server.baseUrl}${path}${tail}`, { method, signal: AbortSignal.timeout(DEADLINE_MS) });
        const text = await response.text();
        if (response.status >= 500) throw new Error(`${method} ${path}${tail} answered ${response.status}: ${text.slice(0, 300)}`);
      }),
      { numRuns: RUNS * 10, interruptAfterTimeLimit: 30_000, markInterruptAsFailure: false },
    );
  }, 60_000);
}
