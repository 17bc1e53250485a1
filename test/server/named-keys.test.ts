// Named keys on real servers with the real clients (issue 45): keys made with `llamux keys create`, one
// `llamux serve` per profile, each with its own copy of the keys file (a keys file belongs to one server:
// its usage file is written beside it). Scopes refused and allowed through openai, ollama,
// @anthropic-ai/sdk and @lmstudio/sdk; limits hit (429 with Retry-After) and recovered by a change to the
// file while the server runs; other keys' objects answered as unknown; a corrupt file at start and on
// reload; usage that survives a restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { LMStudioClient } from "@lmstudio/sdk";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { quietLogger } from "./lmstudio-sdk-fixture.ts";
import { freePort, startServer, type RunningServer } from "./serve-fixture.ts";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");
const PROFILES = ["a", "b", "c"] as const;
type Profile = (typeof PROFILES)[number];

const dir = mkdtempSync(join(tmpdir(), "llamux-named-keys-"));
const keysFile = (profile: Profile) => join(dir, `keys-${profile}.json`);
const servers: Partial<Record<Profile, RunningServer>> = {};
const secrets: Record<string, string> = {};
let model: string;
let hub: HubServer;

async function llamux(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, main, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, LLAMUX_LOG_LEVEL: "warn" } });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

async function createKey(file: string, name: string, flags: string[]): Promise<string> {
  const made = await llamux(["keys", "create", name, ...flags, "--keys-file", file]);
  expect(made.code).toBe(0);
  return made.stdout.trim();
}

function serve(profile: Profile, extra: string[] = []): Promise<RunningServer> {
  return startServer([model, "--served-model-name", "tiny", "--ctx-size", "512", "--parallel", "2", "--threads", "1", "--profile", profile, "--keys-file", keysFile(profile), ...extra],
    { LLAMUX_LOG_LEVEL: "info", HF_ENDPOINT: hub.url, LLAMUX_MODELS: join(dir, "store") });
}

beforeAll(async () => {
  model = await ensureModel("tiny-llama");
  hub = await startHubServer({});
  const base = join(dir, "keys.json");
  secrets.alice = await createKey(base, "alice", ["--models", "tiny"]); // chat, embeddings, audio; the served model only
  secrets.bob = await createKey(base, "bob", ["--scope", "chat,admin", "--weight", "2", "--max-parallel", "1"]);
  secrets.frank = await createKey(base, "frank", ["--scope", "admin"]);
  secrets.carol = await createKey(base, "carol", ["--scope", "chat", "--rpm", "2"]);
  secrets.dave = await createKey(base, "dave", ["--scope", "chat", "--tokens-per-day", "10"]);
  secrets.erin = await createKey(base, "erin", ["--scope", "embeddings"]);
  secrets.mia = await createKey(base, "mia", ["--scope", "chat,mcp"]);
  for (const profile of PROFILES) copyFileSync(base, keysFile(profile));
  const started = await Promise.all(PROFILES.map((profile) => serve(profile)));
  PROFILES.forEach((profile, index) => (servers[profile] = started[index]));
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  await hub?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const openai = (profile: Profile, key: string) => new OpenAI({ baseURL: `${servers[profile]!.baseUrl}/v1`, apiKey: key, maxRetries: 0, timeout: 120_000 });
const ollama = (key: string) => new Ollama({ host: servers.a!.baseUrl, headers: { Authorization: `Bearer ${key}` } });
const anthropic = (profile: Profile, key: string) => new Anthropic({ baseURL: servers[profile]!.baseUrl, apiKey: key, maxRetries: 0, timeout: 120_000 });
const get = (profile: Profile, path: string, key: string) => fetch(`${servers[profile]!.baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });
const post = (profile: Profile, path: string, key: string, body: unknown) => fetch(`${servers[profile]!.baseUrl}${path}`, {
  method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body),
});

/** What a client call was refused with. */
async function refusal<T>(call: Promise<unknown>): Promise<T> {
  try {
    await call;
  } catch (error) {
    return error as T;
  }
  throw new Error("expected the call to be refused");
}

/** Runs `change` to the keys file of a profile's server and waits until that server has read the file again. */
async function reloaded(change: () => unknown, profile: Profile = "a"): Promise<void> {
  const reads = () => servers[profile]!.stderr().match(/keys file ".*" reloaded: \d+ keys/g)?.length ?? 0;
  const before = reads();
  await change();
  const deadline = Date.now() + 15_000;
  while (reads() === before) {
    if (Date.now() > deadline) throw new Error(`the server did not read its keys file again: ${servers[profile]!.stderr().slice(-1000)}`);
    await Bun.sleep(50);
  }
}

/** Replaces a key's entry fields in a server's keys file, as an admin editing it by hand would. */
function editKey(profile: Profile, name: string, change: Record<string, unknown>): void {
  const file = JSON.parse(readFileSync(keysFile(profile), "utf8")) as { keys: Array<Record<string, unknown>> };
  const entry = file.keys.find((key) => key.name === name)!;
  Object.assign(entry, change);
  writeFileSync(keysFile(profile), JSON.stringify(file, null, 2));
}

describe("scopes, refused and allowed", () => {
  test("openai: a key without chat gets PermissionDeniedError naming the scope; one with it chats; /metrics is an admin's", async () => {
    const denied = await refusal<InstanceType<typeof OpenAI.PermissionDeniedError>>(openai("b", secrets.erin!).chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hi" }], max_tokens: 2 }));
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(denied.status).toBe(403);
    expect(denied.code).toBe("missing_scope");
    expect(denied.message).toContain('Missing scope "chat": API key "erin"');
    const reply = await openai("b", secrets.alice!).chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hi" }], max_tokens: 2 });
    expect(reply.choices).toHaveLength(1);
    expect((await get("b", "/metrics", secrets.alice!)).status).toBe(403);
    const metrics = await (await get("b", "/metrics", secrets.frank!)).text();
    expect(metrics).toMatch(new RegExp(`llamux:key_prompt_tokens_total\\{key="alice"\\} ${reply.usage!.prompt_tokens}\\b`));
    expect(metrics).toContain('llamux:key_requests_total{key="alice"} 1');
    expect(metrics).not.toContain(secrets.alice!);
  }, 120_000);

  test("openai: a request that names an MCP server needs the mcp scope, whatever else the key may do", async () => {
    const withMcp = (key: string) => post("b", "/v1/chat/completions", key, {
      model: "tiny", messages: [{ role: "user", content: "Hi" }], max_tokens: 2, tools: [{ type: "mcp", server_label: "files" }],
    });
    const denied = await withMcp(secrets.bob!);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ error: { code: "missing_scope", message: expect.stringContaining('Missing scope "mcp": API key "bob"') } });
    // with the scope, the request gets as far as the server's MCP set-up (none is configured here: a 400)
    const allowed = await withMcp(secrets.mia!);
    expect(allowed.status).toBe(400);
    expect(JSON.stringify(await allowed.json())).toContain('No MCP server \\"files\\" is configured');
  }, 120_000);

  test("ollama: pulling, deleting and creating need admin; chat does not", async () => {
    const pull = await refusal<{ status_code: number; error: string }>(ollama(secrets.alice!).pull({ model: "llama3.2" }));
    expect(pull.status_code).toBe(403);
    expect(pull.error).toContain('Missing scope "admin": API key "alice"');
    expect((await refusal<{ status_code: number }>(ollama(secrets.alice!).delete({ model: "tiny" }))).status_code).toBe(403);
    // an admin gets past the scope to the route's own answer (no such stored model)
    const missing = await refusal<{ status_code: number; error: string }>(ollama(secrets.bob!).delete({ model: "no-such-model" }));
    expect(missing.status_code).toBe(404);
    const reply = await ollama(secrets.alice!).chat({ model: "tiny", messages: [{ role: "user", content: "Hi" }], options: { num_predict: 2 } });
    expect(reply.done).toBe(true);
    expect((await ollama(secrets.erin!).list()).models).toBeDefined(); // listing needs any key
  }, 120_000);

  test("@anthropic-ai/sdk: permission_error without chat, an answer with it", async () => {
    const denied = await refusal<InstanceType<typeof Anthropic.PermissionDeniedError>>(anthropic("c", secrets.erin!).messages.create({ model: "tiny", max_tokens: 2, messages: [{ role: "user", content: "Hi" }] }));
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((denied.error as { error: { type: string } }).error.type).toBe("permission_error");
    const answer = await anthropic("c", secrets.alice!).messages.create({ model: "tiny", max_tokens: 2, messages: [{ role: "user", content: "Hi" }] });
    expect(answer.type).toBe("message");
  }, 120_000);

  test("@lmstudio/sdk: a named key's secret as the passkey; predicting needs chat, loading needs admin", async () => {
    const client = new LMStudioClient({ baseUrl: servers.c!.baseUrl.replace("http", "ws"), clientIdentifier: "alice-app", clientPasskey: secrets.alice!, logger: quietLogger });
    const loaded = await client.llm.model();
    const result = await loaded.respond("Hi", { maxTokens: 2 });
    expect(result.stats.predictedTokensCount).toBeLessThanOrEqual(2);
    await expect(client.llm.load("tiny", { verbose: false })).rejects.toThrow(/Missing scope "admin": API key "alice"/);
    await expect(client.llm.unload(loaded.identifier)).rejects.toThrow(/Missing scope "admin"/);
    const embedOnly = new LMStudioClient({ baseUrl: servers.c!.baseUrl.replace("http", "ws"), clientIdentifier: "erin-app", clientPasskey: secrets.erin!, logger: quietLogger });
    await expect((async () => (await embedOnly.llm.model()).respond("Hi", { maxTokens: 2 }))()).rejects.toThrow(/Missing scope "chat": API key "erin"/);
    const stranger = new LMStudioClient({ baseUrl: servers.c!.baseUrl.replace("http", "ws"), clientIdentifier: "x", clientPasskey: "llx-00000000-" + "A".repeat(43), logger: quietLogger });
    await expect(stranger.llm.listLoaded()).rejects.toThrow();
  }, 120_000);
});

describe("limits, hit and recovered", () => {
  test("rpm: openai's RateLimitError and Anthropic's rate_limit_error, each with Retry-After", async () => {
    const ask = () => openai("b", secrets.carol!).chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hi" }], max_tokens: 1 });
    await ask();
    await ask();
    const limited = await refusal<InstanceType<typeof OpenAI.RateLimitError>>(ask());
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.code).toBe("rate_limit_exceeded");
    const wait = Number(limited.headers?.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);

    const message = () => anthropic("c", secrets.carol!).messages.create({ model: "tiny", max_tokens: 1, messages: [{ role: "user", content: "Hi" }] });
    await message();
    await message();
    const refused = await refusal<InstanceType<typeof Anthropic.RateLimitError>>(message());
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused.error as { error: { type: string } }).error.type).toBe("rate_limit_error");
    expect(Number(refused.headers?.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // the refusals are counted
    const usage = await (await get("b", "/v1/usage", secrets.carol!)).json() as { data: Array<{ requests: number; rate_limited: number }> };
    expect(usage.data[0]).toMatchObject({ requests: 2, rate_limited: 1 });
  }, 120_000);

  test("tokens per day: ollama's error string once prompt and completion tokens reach it, open again when the file raises it", async () => {
    const chat = () => ollama(secrets.dave!).chat({ model: "tiny", messages: [{ role: "user", content: "Tell me something" }], options: { num_predict: 4 } });
    const first = await chat(); // crosses the limit of 10 and completes
    expect(first.prompt_eval_count! + first.eval_count!).toBeGreaterThanOrEqual(10);
    const limited = await refusal<{ status_code: number; error: string }>(chat());
    expect(limited.status_code).toBe(429);
    expect(limited.error).toContain('Rate limit reached for API key "dave" on tokens per day (UTC): limit 10');
    const usage = await (await get("a", "/v1/usage", secrets.dave!)).json() as { data: Array<{ tokens_today: number; prompt_tokens: number; completion_tokens: number }> };
    expect(usage.data[0]!.tokens_today).toBe(first.prompt_eval_count! + first.eval_count!);
    expect(usage.data[0]!.prompt_tokens + usage.data[0]!.completion_tokens).toBe(usage.data[0]!.tokens_today);

    await reloaded(() => editKey("a", "dave", { tokens_per_day: 1_000_000 }));
    expect((await chat()).done).toBe(true);
  }, 120_000);
});

describe("other keys' objects are invisible", () => {
  test("stored responses, LM Studio chat threads, download jobs and the request log answer as unknown ids", async () => {
    const first = await openai("c", secrets.alice!).responses.create({ model: "tiny", input: "My secret word is pelican", max_output_tokens: 2 });
    const stolen = await refusal<{ status: number }>(openai("c", secrets.bob!).responses.create({ model: "tiny", input: "x", previous_response_id: first.id, max_output_tokens: 2 }));
    expect(stolen.status).toBe(404);

    const thread = await (await post("c", "/api/v1/chat", secrets.alice!, { model: "tiny", input: "Hello", max_output_tokens: 2 })).json() as { response_id: string };
    expect((await post("c", "/api/v1/chat", secrets.bob!, { model: "tiny", input: "x", previous_response_id: thread.response_id, max_output_tokens: 2 })).status).toBe(404);

    const job = await (await post("c", "/api/v1/models/download", secrets.bob!, { model: "llamux-test/Missing-GGUF" })).json() as { job_id: string };
    expect(job.job_id).toStartWith("job_");
    expect((await get("c", `/api/v1/models/download/status/${job.job_id}`, secrets.bob!)).status).toBe(200);
    const other = await get("c", `/api/v1/models/download/status/${job.job_id}`, secrets.frank!);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { type: string } }).error.type).toBe("job_not_found");

    const log = async (key: string) => ((await (await get("c", "/api/v1/server/requests", key)).json()) as { requests: Array<{ path: string }> }).requests.map((r) => r.path);
    expect(await log(secrets.frank!)).toEqual(expect.arrayContaining(["/api/v1/models/download/status/" + job.job_id]));
    expect(await log(secrets.frank!)).not.toContain("/v1/responses");
    expect(await log(secrets.alice!)).toContain("/v1/responses");
    expect(await log(secrets.alice!)).not.toContain("/api/v1/models/download");
  }, 120_000);
});

describe("the keys file, changed while the server runs", () => {
  test("a new key works, a revoked one stops, a corrupt change keeps the last good set", async () => {
    let gina = "";
    await reloaded(async () => (gina = await createKey(keysFile("a"), "gina", ["--scope", "chat"])));
    expect((await get("a", "/api/tags", gina)).status).toBe(200);

    await reloaded(async () => expect((await llamux(["keys", "revoke", "erin", "--keys-file", keysFile("a")])).code).toBe(0));
    expect((await get("a", "/api/tags", secrets.erin!)).status).toBe(401);

    writeFileSync(keysFile("a"), '{"version": 1, "keys": [{"name": "gina", ');
    await servers.a!.logged(/Cannot read keys file ".*keys-a\.json": not JSON .*: keeping the 7 keys last read/);
    expect((await get("a", "/api/tags", gina)).status).toBe(200);
    expect((await get("a", "/api/tags", secrets.erin!)).status).toBe(401);
  }, 60_000);

  test("an SDK socket whose key is revoked while it is open is refused on its next call", async () => {
    const client = new LMStudioClient({ baseUrl: servers.c!.baseUrl.replace("http", "ws"), clientIdentifier: "dave-app", clientPasskey: secrets.dave!, logger: quietLogger });
    expect((await client.llm.listLoaded()).length).toBeGreaterThan(0);
    await reloaded(async () => expect((await llamux(["keys", "revoke", "dave", "--keys-file", keysFile("c")])).code).toBe(0), "c");
    await expect(client.llm.listLoaded()).rejects.toThrow(/no longer accepted/);
  }, 60_000);

  test("a corrupt keys file stops the server at start with the reason", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, '{"version": 1, "keys": [{"name": "x", "scopes": ["root"]}]}');
    const started = await llamux(["serve", "--keys-file", bad, "--port", String(await freePort()), "--sdk-port", "0"]);
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(`error: Cannot read keys file "${bad}": keys[0].id:`);
    const missing = await llamux(["serve", "--keys-file", join(dir, "nowhere.json"), "--port", String(await freePort()), "--sdk-port", "0"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file");
  }, 60_000);

  test("usage survives a restart", async () => {
    const before = await (await get("b", "/v1/usage?key=alice", secrets.frank!)).json() as { data: Array<Record<string, number>> };
    expect(before.data[0]!.requests).toBeGreaterThan(0);
    await servers.b!.stop();
    servers.b = await serve("b");
    const after = await (await get("b", "/v1/usage?key=alice", secrets.frank!)).json() as { data: Array<Record<string, number>> };
    for (const field of ["requests", "prompt_tokens", "completion_tokens", "tokens_today"]) expect(after.data[0]![field]).toBe(before.data[0]![field]);
    const cli = await llamux(["keys", "usage", "alice", "--json", "--keys-file", keysFile("b")]);
    expect(JSON.parse(cli.stdout)[0]).toMatchObject({ key: "alice", requests: before.data[0]!.requests });
  }, 120_000);
});
