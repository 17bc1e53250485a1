// Property-based fuzzing (fast-check) of every route that takes a body, on the three profiles, through
// real `llamux serve` processes with a real model: malformed JSON, arbitrary JSON values, and valid
// requests with one field replaced by an arbitrary value. Every answer must come within a deadline
// (no hang), be below 500 (no server error), and the servers must stay up (no crash).
//
// Fields whose bounds another part of the work owns (token ids, templates, grammars, context sizes) are
// left out of the random mutations; their own fuzz tests cover them. Three kinds of field reach deep code
// and get hostile values of their own on every route that takes them (the tables SCHEMA_SLOTS,
// PATH_SLOTS and MEDIA_SLOTS below): JSON schemas (nested 10,000 deep, huge, self-referencing), file
// paths (absent, a directory, a FIFO, a device, junk named *.gguf) and media (images and audio cut
// short or whose header promises a size past every bound). Every listener is covered: the profiles'
// ports, and LM Studio's SDK socket with a hostile structured-output schema.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";
import { RawSocket } from "./lmstudio-sdk-fixture.ts";
import { fifoModelPath, HOSTILE_AUDIO, HOSTILE_SCHEMAS, hostileImages, hostileModelPaths, schemaArbitrary } from "../fixtures/hostile-inputs.ts";

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
  // the text model has no speech output: every valid body is a 400 before anything loads
  { method: "POST", path: "/v1/audio/speech", valid: (model) => ({ model, input: "Hi", voice: "alloy", max_frames: 2 }) },
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
/** The served model, with a vision projector beside it. */
let model: string;
/** A model with an audio projector beside it, named by path (profiles a and b load it on request). */
let audioModel: string;
let paths: ReturnType<typeof hostileModelPaths>;

beforeAll(async () => {
  storeDir = mkdtempSync(join(tmpdir(), "llamux-fuzz-"));
  const [llama, vision, audio] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-mmproj"), ensureModel("tiny-audio-mmproj")]);
  for (const [name, projector] of [["vision", vision], ["audio", audio]] as const) {
    mkdirSync(join(storeDir, name));
    symlinkSync(llama, join(storeDir, name, `fuzz-${name}.gguf`));
    symlinkSync(projector, join(storeDir, name, `mmproj-fuzz-${name}.gguf`));
  }
  model = join(storeDir, "vision", "fuzz-vision.gguf");
  audioModel = join(storeDir, "audio", "fuzz-audio.gguf");
  paths = hostileModelPaths(llama);
  // Pulls and downloads go nowhere: the registry and the hub are closed ports.
  const env = { LLAMUX_MODELS: join(storeDir, "store"), OLLAMA_REGISTRY: "http://127.0.0.1:9", HF_ENDPOINT: "http://127.0.0.1:9" };
  const common = [model, "--ctx-size", "256", "--parallel", "2", "--threads", "1", "--served-model-name", "fuzz"];
  const started = await Promise.all((["a", "b", "c"] as const).map((profile) => startServer([...common, "--profile", profile], env)));
  [servers.a, servers.b, servers.c] = started;
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  rmSync(storeDir, { recursive: true, force: true });
  if (paths) rmSync(paths.dir, { recursive: true, force: true });
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

// ------------------------------------------------------------------- schemas, paths and media, per route

/** One place a hostile value goes: the route, and the request carrying the value. */
interface Slot<T> {
  route: string;
  method?: "POST" | "GET" | "HEAD";
  request: (value: T) => Record<string, unknown> | FormData | undefined;
  /** GET and HEAD slots put the value in the path. */
  path?: (value: T) => string;
}

const user = (content: unknown) => [{ role: "user", content }];
const schemaSlotsOpenAi: Array<Slot<unknown>> = [
  { route: "/v1/chat/completions", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, response_format: { type: "json_schema", json_schema: { name: "x", schema } } }) },
  { route: "/v1/chat/completions", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, tools: [{ type: "function", function: { name: "f", parameters: schema } }], tool_choice: "required" }) },
  // tool_choice auto: the schema reaches the chat template, not the grammar
  { route: "/v1/chat/completions", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, tools: [{ type: "function", function: { name: "f", parameters: schema } }] }) },
  { route: "/v1/completions", request: (schema) => ({ model: "fuzz", prompt: "Hi", max_tokens: 2, response_format: { type: "json_schema", json_schema: { name: "x", schema } } }) },
  { route: "/v1/responses", request: (schema) => ({ model: "fuzz", input: "Hi", max_output_tokens: 2, text: { format: { type: "json_schema", name: "x", schema } } }) },
  { route: "/v1/responses", request: (schema) => ({ model: "fuzz", input: "Hi", max_output_tokens: 2, tools: [{ type: "function", name: "f", parameters: schema }], tool_choice: "required" }) },
  { route: "/v1/responses", request: (schema) => ({ model: "fuzz", input: "Hi", max_output_tokens: 2, tools: [{ type: "function", name: "f", parameters: schema }] }) },
  { route: "/v1/messages", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, tools: [{ name: "f", input_schema: schema }], tool_choice: { type: "any" } }) },
  { route: "/v1/messages", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, tools: [{ name: "f", input_schema: schema }] }) },
  { route: "/v1/messages", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, output_config: { format: { type: "json_schema", schema } } }) },
  { route: "/v1/messages/count_tokens", request: (schema) => ({ model: "fuzz", messages: user("Hi"), tools: [{ name: "f", input_schema: schema }] }) },
];
const SCHEMA_SLOTS: Record<Profile, Array<Slot<unknown>>> = {
  a: [
    ...schemaSlotsOpenAi,
    { route: "/api/chat", request: (format) => ({ model: "fuzz", messages: user("Hi"), stream: false, format, options: { num_predict: 2 } }) },
    { route: "/api/chat", request: (parameters) => ({ model: "fuzz", messages: user("Hi"), stream: false, tools: [{ type: "function", function: { name: "f", parameters } }], options: { num_predict: 2 } }) },
    { route: "/api/generate", request: (format) => ({ model: "fuzz", prompt: "Hi", stream: false, format, options: { num_predict: 2 } }) },
  ],
  b: [
    ...schemaSlotsOpenAi,
    { route: "/v1/chat/completions", request: (json) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, structured_outputs: { json } }) },
    { route: "/v1/completions", request: (guided_json) => ({ model: "fuzz", prompt: "Hi", max_tokens: 2, guided_json }) },
  ],
  c: [
    ...schemaSlotsOpenAi,
    { route: "/api/v0/chat/completions", request: (schema) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, response_format: { type: "json_schema", json_schema: { name: "x", schema } } }) },
    { route: "/api/v0/chat/completions", request: (parameters) => ({ model: "fuzz", messages: user("Hi"), max_tokens: 2, tools: [{ type: "function", function: { name: "f", parameters } }], tool_choice: "required" }) },
    { route: "/api/v0/completions", request: (schema) => ({ model: "fuzz", prompt: "Hi", max_tokens: 2, response_format: { type: "json_schema", json_schema: { name: "x", schema } } }) },
  ],
};

/** Sends one hostile request; says what went wrong (a 5xx, no answer within the deadline, a dead server), or nothing. */
async function hostileRequest(server: RunningServer, slot: Slot<never>, value: unknown, label: string, deadlineMs = DEADLINE_MS): Promise<string | undefined> {
  const method = slot.method ?? "POST";
  const body = slot.request(value as never);
  const where = `${method} ${slot.path ? slot.path(value as never) : slot.route} with ${label}`;
  try {
    const response = await fetch(`${server.baseUrl}${slot.path ? slot.path(value as never) : slot.route}`, {
      method,
      ...(body instanceof FormData ? { body } : body ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } } : {}),
      signal: AbortSignal.timeout(deadlineMs),
    });
    const text = await response.text();
    if (response.status >= 500) return `${where}: ${response.status} ${text.slice(0, 200)}`;
    if (/"(code|status)":\s*5\d\d\b/.test(text)) return `${where}: a server error inside a ${response.status}: ${text.slice(0, 200)}`;
    return undefined;
  } catch (error) {
    return `${where}: ${(error as Error).name === "TimeoutError" ? `no answer within ${deadlineMs} ms` : (error as Error).message}`;
  }
}

/** Runs every value in every slot, one at a time, and fails with the whole list of what went wrong. */
async function fuzzSlots<T>(profile: Profile, slots: Array<Slot<T>>, values: ReadonlyArray<{ label: string; value: T }>): Promise<void> {
  const server = servers[profile]!;
  const failures: string[] = [];
  for (const slot of slots) {
    for (const { label, value } of values) {
      const failure = await hostileRequest(server, slot as Slot<never>, value, label);
      if (failure) failures.push(failure);
    }
  }
  // Still up, and still generating.
  const probe = await send(server, ROUTES[profile][0]!, { kind: "json", value: ROUTES[profile][0]!.valid("fuzz") });
  if (probe.status !== 200) failures.push(`afterwards, a valid request answered ${probe.status}: ${probe.text.slice(0, 200)}`);
  expect(failures).toEqual([]);
}

/**
 * The slots a profile gets the large hostile schemas in (a second or two each, where the schema reaches
 * the chat template): its own slots, and one in three of the OpenAI slots every profile shares, in turn,
 * so that each shared slot gets them on one profile.
 */
const largeSchemaSlots = (profile: Profile) => SCHEMA_SLOTS[profile].filter((slot) => {
  const shared = schemaSlotsOpenAi.indexOf(slot);
  return shared < 0 || shared % 3 === ["a", "b", "c"].indexOf(profile);
});

for (const profile of ["a", "b", "c"] as const) {
  test(`profile ${profile}: every route that takes a JSON schema, with schemas nested deep, huge or self-referencing`, async () => {
    const values = (large: boolean) => HOSTILE_SCHEMAS.filter((schema) => (schema.large ?? false) === large).map(({ label, schema }) => ({ label, value: schema }));
    await fuzzSlots(profile, SCHEMA_SLOTS[profile], values(false));
    await fuzzSlots(profile, largeSchemaSlots(profile), values(true));
    // And random schema-shaped values, in random slots (the named hostile ones went to every slot above).
    const server = servers[profile]!;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SCHEMA_SLOTS[profile]), schemaArbitrary, async (slot, schema) => {
        const failure = await hostileRequest(server, slot as Slot<never>, schema, `random ${JSON.stringify(schema).slice(0, 80)}`);
        if (failure) throw new Error(failure);
      }),
      { numRuns: RUNS * 3, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: false },
    );
  }, 600_000);
}

/** Every route that takes a model (or a file) by name, which a path may be. */
const modelSlots = (field: string, route: string, rest: Record<string, unknown>): Slot<string> => ({ route, request: (path) => ({ ...rest, [field]: path }) });
const pathSlotsOpenAi: Array<Slot<string>> = [
  modelSlots("model", "/v1/chat/completions", { messages: user("Hi"), max_tokens: 2 }),
  modelSlots("model", "/v1/completions", { prompt: "Hi", max_tokens: 2 }),
  modelSlots("model", "/v1/embeddings", { input: "Hi" }),
  modelSlots("model", "/v1/responses", { input: "Hi", max_output_tokens: 2 }),
  modelSlots("model", "/v1/messages", { messages: user("Hi"), max_tokens: 2 }),
  modelSlots("model", "/v1/messages/count_tokens", { messages: user("Hi") }),
  modelSlots("model", "/v1/rerank", { query: "q", documents: ["a"] }),
  { route: "/v1/models/:id", method: "GET", request: () => undefined, path: (path) => `/v1/models/${encodeURIComponent(path)}` },
];
const PATH_SLOTS: Record<Profile, Array<Slot<string>>> = {
  a: [
    ...pathSlotsOpenAi,
    modelSlots("model", "/api/generate", { prompt: "Hi", stream: false, options: { num_predict: 2 } }),
    modelSlots("model", "/api/chat", { messages: user("Hi"), stream: false, options: { num_predict: 2 } }),
    modelSlots("model", "/api/embed", { input: "Hi" }),
    modelSlots("model", "/api/embeddings", { prompt: "Hi" }),
    modelSlots("model", "/api/show", {}),
    modelSlots("from", "/api/create", { model: "fuzzed-from-path", stream: false }),
    modelSlots("source", "/api/copy", { destination: "fuzzed-copy" }),
    { route: "/api/delete", method: "POST", request: (path) => ({ model: path }) },
    { route: "/api/blobs/:digest", method: "HEAD", request: () => undefined, path: (path) => `/api/blobs/${encodeURIComponent(path)}` },
    { route: "/v1/audio/transcriptions", request: (path) => form({ model: path }) },
  ],
  b: [
    ...pathSlotsOpenAi,
    modelSlots("model", "/tokenize", { prompt: "Hi" }),
    modelSlots("model", "/detokenize", { tokens: [1, 2] }),
    modelSlots("model", "/score", { text_1: "a", text_2: "b" }),
    { route: "/v1/audio/transcriptions", request: (path) => form({ model: path }) },
  ],
  c: [
    ...pathSlotsOpenAi,
    modelSlots("draft_model", "/v1/chat/completions", { model: "fuzz", messages: user("Hi"), max_tokens: 2 }),
    modelSlots("draft_model", "/v1/completions", { model: "fuzz", prompt: "Hi", max_tokens: 2 }),
    modelSlots("model", "/api/v0/chat/completions", { messages: user("Hi"), max_tokens: 2 }),
    modelSlots("draft_model", "/api/v0/chat/completions", { model: "fuzz", messages: user("Hi"), max_tokens: 2 }),
    modelSlots("model", "/api/v1/chat", { input: "Hi", max_output_tokens: 2 }),
    modelSlots("model", "/api/v1/models/load", {}),
    modelSlots("instance_id", "/api/v1/models/unload", {}),
    modelSlots("model", "/api/v1/models/delete", {}),
    { route: "/api/v0/models/:id", method: "GET", request: () => undefined, path: (path) => `/api/v0/models/${encodeURIComponent(path)}` },
  ],
};

/** A transcription upload: a small WAV and the given fields. */
function form(fields: Record<string, string>, audio: Uint8Array = HOSTILE_AUDIO.find((a) => a.label.startsWith("WAV cut inside its data"))!.bytes): FormData {
  const data = new FormData();
  data.append("file", new Blob([audio as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "clip.wav");
  for (const [key, value] of Object.entries(fields)) data.append(key, value);
  return data;
}

for (const profile of ["a", "b", "c"] as const) {
  test(`profile ${profile}: every route that takes a model or file by name, with paths that are not GGUF files`, async () => {
    await fuzzSlots(profile, PATH_SLOTS[profile], paths.paths.map(({ label, path }) => ({ label, value: path })));
  }, 600_000);

  test(`profile ${profile}: a FIFO named *.gguf answers without freezing the server`, async () => {
    const fifo = fifoModelPath(paths.dir);
    if (!fifo) throw new Error("mkfifo is needed for this test");
    const failures: string[] = [];
    try {
      // One route of each family: the model field, and draft_model on profile c.
      const slots = PATH_SLOTS[profile].filter((slot) => ["/v1/chat/completions", "/api/create"].includes(slot.route));
      for (const slot of slots) {
        const request = hostileRequest(servers[profile]!, slot as Slot<never>, fifo, "a FIFO", 10_000);
        // While it is answered, the server answers others.
        const probe = await fetch(`${servers[profile]!.baseUrl}/v1/models`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, (error: Error) => error.name);
        if (probe !== 200) failures.push(`GET /v1/models while ${slot.route} named a FIFO: ${probe}`);
        const failure = await request;
        if (failure) failures.push(failure);
      }
    } finally {
      // A server blocked opening the FIFO for reading is released by a writer.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // nobody is reading it
      }
      rmSync(fifo, { force: true });
    }
    expect(failures).toEqual([]);
  }, 120_000);
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
type Media = { bytes: Uint8Array; mime: string };
const imageSlotsOpenAi: Array<Slot<Media>> = [
  { route: "/v1/chat/completions", request: (image) => ({ model: "fuzz", max_tokens: 2, messages: user([{ type: "image_url", image_url: { url: `data:${image.mime};base64,${base64(image.bytes)}` } }, { type: "text", text: "Hi" }]) }) },
  { route: "/v1/responses", request: (image) => ({ model: "fuzz", max_output_tokens: 2, input: [{ role: "user", content: [{ type: "input_image", image_url: `data:${image.mime};base64,${base64(image.bytes)}` }] }] }) },
  { route: "/v1/messages", request: (image) => ({ model: "fuzz", max_tokens: 2, messages: user([{ type: "image", source: { type: "base64", media_type: image.mime, data: base64(image.bytes) } }]) }) },
  { route: "/v1/messages/count_tokens", request: (image) => ({ model: "fuzz", messages: user([{ type: "image", source: { type: "base64", media_type: image.mime, data: base64(image.bytes) } }]) }) },
];
const IMAGE_SLOTS: Record<Profile, Array<Slot<Media>>> = {
  a: [
    ...imageSlotsOpenAi,
    { route: "/api/chat", request: (image) => ({ model: "fuzz", stream: false, messages: [{ role: "user", content: "Hi", images: [base64(image.bytes)] }], options: { num_predict: 2 } }) },
    { route: "/api/generate", request: (image) => ({ model: "fuzz", stream: false, prompt: "Hi", images: [base64(image.bytes)], options: { num_predict: 2 } }) },
  ],
  b: imageSlotsOpenAi,
  c: [
    ...imageSlotsOpenAi,
    { route: "/api/v0/chat/completions", request: (image) => ({ model: "fuzz", max_tokens: 2, messages: user([{ type: "image_url", image_url: { url: `data:${image.mime};base64,${base64(image.bytes)}` } }]) }) },
    { route: "/api/v1/chat", request: (image) => ({ model: "fuzz", max_output_tokens: 2, input: [{ type: "image", data_url: `data:${image.mime};base64,${base64(image.bytes)}` }, { type: "text", content: "Hi" }] }) },
  ],
};
type Clip = { bytes: Uint8Array; format: string };
/**
 * Audio goes to the model with an audio projector where a path names it (profiles a and b); profile c has
 * only its served model. A clip's 750 tokens do not fit the 256 of context: a clip that passes the
 * checks is decoded by libmtmd, then refused for its length (a 400), which is the path under test.
 */
const audioSlots = (profile: Profile): Array<Slot<Clip>> => {
  const name = () => (profile === "c" ? "fuzz" : audioModel);
  return [
    { route: "/v1/chat/completions", request: (clip) => ({ model: name(), max_tokens: 2, messages: user([{ type: "input_audio", input_audio: { data: base64(clip.bytes), format: clip.format } }, { type: "text", text: "Hi" }]) }) },
    { route: "/v1/responses", request: (clip) => ({ model: name(), max_output_tokens: 2, input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: base64(clip.bytes), format: clip.format } }] }] }) },
    ...(profile === "c" ? [] : [{ route: "/v1/audio/transcriptions", request: (clip: Clip) => form({ model: name() }, clip.bytes) }]),
  ];
};

for (const profile of ["a", "b", "c"] as const) {
  test(`profile ${profile}: every route that takes an image, with images cut short or claiming huge sizes`, async () => {
    const images = hostileImages(join(import.meta.dir, "..", "fixtures", "images"));
    await fuzzSlots(profile, IMAGE_SLOTS[profile], images.map(({ label, bytes, mime }) => ({ label, value: { bytes, mime } })));
  }, 600_000);

  test(`profile ${profile}: every route that takes audio, with clips cut short or whose header claims hours`, async () => {
    await fuzzSlots(profile, audioSlots(profile), HOSTILE_AUDIO.map(({ label, bytes, format }) => ({ label, value: { bytes, format } })));
  }, 600_000);
}

test("profile c, LM Studio's SDK socket: predictions with hostile structured-output schemas and tool parameters end in a channel error or a prediction", async () => {
  const socket = await RawSocket.open(`${servers.c!.baseUrl.replace("http://", "ws://")}/llm`);
  socket.send({ authVersion: 1, clientIdentifier: "fuzz", clientPasskey: "x" });
  expect(await socket.next()).toEqual({ success: true });
  const failures: string[] = [];
  let channelId = 0;
  const predict = async (label: string, fields: Array<{ key: string; value: unknown }>) => {
    const id = channelId++;
    socket.send({
      type: "channelCreate", endpoint: "predict", channelId: id, creationParameter: {
        modelSpecifier: { type: "instanceReference", instanceReference: "fuzz" },
        history: { messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] },
        predictionConfigStack: { layers: [{ layerName: "apiOverride", config: { fields: [{ key: "llm.prediction.maxPredictedTokens", value: { checked: true, value: 2 } }, ...fields] } }] },
      },
    });
    const end = await socket.next((frame) => frame.channelId === id && (frame.type === "channelClose" || frame.type === "channelError"), DEADLINE_MS).catch((error: Error) => ({ type: "timeout", error: error.message }));
    if (end.type === "timeout") failures.push(`${label}: no end of the prediction (${end.error})`);
    // A refusal carries its status: a 4xx (or 501) is the client's, anything else a server failure.
    else if (end.type === "channelError" && (end.error?.errorData?.status ?? 500) >= 500 && end.error?.errorData?.status !== 501) {
      failures.push(`${label}: ${JSON.stringify(end.error).slice(0, 200)}`);
    }
  };
  for (const { label, schema } of HOSTILE_SCHEMAS) {
    await predict(`structured ${label}`, [{ key: "llm.prediction.structured", value: { type: "json", jsonSchema: schema } }]);
    await predict(`tool parameters ${label}`, [
      { key: "llm.prediction.tools", value: { type: "toolArray", tools: [{ type: "function", function: { name: "f", parameters: schema } }] } },
      { key: "llamux.toolChoice", value: "required" },
    ]);
  }
  socket.close();
  expect(failures).toEqual([]);
  // The server still answers.
  expect((await fetch(`${servers.c!.baseUrl}/v1/models`)).status).toBe(200);
}, 600_000);
