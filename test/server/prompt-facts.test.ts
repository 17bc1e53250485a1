// What enters the prompt and what the engine is told, on every chat route: the three profiles' apps over
// real HTTP on loopback, a real engine with the tiny model, and each engine request as the engine client
// received it (its prompt tokens read back as text). Claude Code's attribution line never reaches the
// prompt; a later system message leaves everything before it byte for byte as it was, with a template that
// writes it in place and with one that refuses it; session hints and vLLM's priority reach the engine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EngineClient } from "../../src/engine/engine-client.ts";
import type { GenerateRequest } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startProfileApps, type ProfileApps } from "../fixtures/profile-apps.ts";

const MODEL = "tiny";
// Qwen3's rule, as many GGUF templates have it: a system message anywhere but first is an error.
const REFUSING_TEMPLATE = `{%- for message in messages %}{%- if message.role == "system" and not loop.first %}{{ raise_exception("System message must be at the beginning.") }}{%- endif %}` +
  `{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}`;
const ATTRIBUTION = "x-anthropic-billing-header: cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;";

/** Each engine request since the last take, with its prompt as text. */
const seen: Array<{ request: Omit<GenerateRequest, "id">; text: Promise<string> }> = [];
const originalGenerate = EngineClient.prototype.generate;
let inPlace: ProfileApps;
let refusing: ProfileApps;

beforeAll(async () => {
  EngineClient.prototype.generate = function (this: EngineClient, request, signal) {
    const tokens = request.prompt;
    seen.push({ request, text: typeof tokens === "string" ? Promise.resolve(tokens) : this.detokenize(tokens) });
    return originalGenerate.call(this, request, signal);
  };
  const path = await ensureModel("tiny-llama");
  const options = { parallel: 2, contextPerSequence: 2048, threads: 2 };
  inPlace = startProfileApps([{ path, name: MODEL }], options);
  refusing = startProfileApps([{ path, name: MODEL }], { ...options, chatTemplate: REFUSING_TEMPLATE });
}, 60_000);
afterAll(async () => {
  EngineClient.prototype.generate = originalGenerate;
  await Promise.all([inPlace?.stop(), refusing?.stop()]);
});

async function take(): Promise<{ request: Omit<GenerateRequest, "id">; text: string }> {
  expect(seen.length).toBe(1);
  const { request, text } = seen.splice(0)[0]!;
  return { request, text: await text };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: ${response.status} ${text}`);
}

/** A conversation (system, user, assistant, [later system], user) in each chat route's own shape. */
interface Route {
  name: string;
  send(apps: ProfileApps, turns: { system: string; late?: string }, headers?: Record<string, string>): Promise<void>;
}

const FIRST = "first question";
const REPLY = "FIRST-REPLY";
const LAST = "LAST-TURN";
const LATE = "LATE-SYSTEM note";

const chatMessages = ({ system, late }: { system: string; late?: string }) => [
  { role: "system", content: system }, { role: "user", content: FIRST }, { role: "assistant", content: REPLY },
  ...(late ? [{ role: "system", content: late }] : []), { role: "user", content: LAST },
];

const ROUTES: Route[] = [
  ...(["a", "b", "c"] as const).map((profile): Route => ({
    name: `chat completions (profile ${profile})`,
    send: (apps, turns, headers) => post(`${apps.base[profile]}/v1/chat/completions`, { model: MODEL, max_tokens: 1, messages: chatMessages(turns) }, headers),
  })),
  {
    name: "Responses",
    send: (apps, turns, headers) => post(`${apps.base.b}/v1/responses`, { model: MODEL, max_output_tokens: 1, input: chatMessages(turns) }, headers),
  },
  {
    name: "Messages",
    send: (apps, { system, late }, headers) => post(`${apps.base.a}/v1/messages`, {
      model: MODEL, max_tokens: 1, system: system.split("\n").map((text) => ({ type: "text", text })),
      messages: [{ role: "user", content: FIRST }, { role: "assistant", content: REPLY }, ...(late ? [{ role: "system", content: late }] : []), { role: "user", content: LAST }],
    }, headers),
  },
  {
    name: "Ollama /api/chat",
    send: (apps, turns, headers) => post(`${apps.base.a}/api/chat`, { model: MODEL, stream: false, options: { num_predict: 1 }, messages: chatMessages(turns) }, headers),
  },
  {
    name: "LM Studio /api/v0/chat/completions",
    send: (apps, turns, headers) => post(`${apps.base.c}/api/v0/chat/completions`, { model: MODEL, max_tokens: 1, messages: chatMessages(turns) }, headers),
  },
];

describe.each(ROUTES)("$name", (route) => {
  test("Claude Code's attribution line never reaches the prompt; the rest of the system prompt does", async () => {
    seen.length = 0;
    await route.send(inPlace, { system: `${ATTRIBUTION}\nYou are a coding agent.` });
    const { text } = await take();
    expect(text).not.toContain("x-anthropic-billing-header");
    expect(text).toContain("You are a coding agent.");
  });

  test.each([["writes it in place", () => inPlace], ["refuses it", () => refusing]] as const)(
    "a later system message leaves the prompt before it as it was, with a template that %s", async (how, apps) => {
      seen.length = 0;
      await route.send(apps(), { system: "You are a coding agent." });
      const before = (await take()).text;
      await route.send(apps(), { system: "You are a coding agent.", late: LATE });
      const after = (await take()).text;
      const end = before.indexOf(REPLY) + REPLY.length;
      expect(end).toBeGreaterThan(REPLY.length);
      expect(after.slice(0, end)).toBe(before.slice(0, end));
      if (how === "refuses it") expect(after).toContain(`<system-reminder>\n${LATE}\n</system-reminder>`);
      else expect(after).toContain(`system\n${LATE}`);
      expect(after.indexOf(LATE)).toBeGreaterThan(end);
    });
});

describe("session hints and priority reach the engine", () => {
  const sessionOf = async (send: () => Promise<void>) => {
    seen.length = 0;
    await send();
    return (await take()).request.schedule;
  };
  const system = { system: "You are a coding agent." };

  test("Claude Code's header on Messages, and metadata.user_id without it", async () => {
    const url = `${inPlace.base.a}/v1/messages`;
    const body = { model: MODEL, max_tokens: 1, messages: [{ role: "user", content: "hi" }], metadata: { user_id: "user-7" } };
    expect(await sessionOf(() => post(url, body, { "X-Claude-Code-Session-Id": "claude-session" }))).toEqual({ session: "claude-session" });
    expect(await sessionOf(() => post(url, body))).toEqual({ session: "user-7" });
  });

  test("Codex's session-id header and prompt_cache_key on Responses", async () => {
    const url = `${inPlace.base.b}/v1/responses`;
    const body = { model: MODEL, max_output_tokens: 1, input: "hi", prompt_cache_key: "thread-1" };
    expect(await sessionOf(() => post(url, body, { "session-id": "codex-session" }))).toEqual({ session: "codex-session" });
    expect(await sessionOf(() => post(url, body))).toEqual({ session: "thread-1" });
  });

  test("prompt_cache_key, user and vLLM's priority on chat completions; headers on Ollama's and LM Studio's chat", async () => {
    const url = `${inPlace.base.b}/v1/chat/completions`;
    const body = { model: MODEL, max_tokens: 1, messages: chatMessages(system) };
    expect(await sessionOf(() => post(url, { ...body, prompt_cache_key: "key-1", user: "alice", priority: -5 }))).toEqual({ session: "key-1", priority: -5 });
    expect(await sessionOf(() => post(url, { ...body, user: "alice" }))).toEqual({ session: "alice" });
    expect(await sessionOf(() => post(url, body))).toBeUndefined();
    expect(await sessionOf(() => ROUTES.find((r) => r.name === "Ollama /api/chat")!.send(inPlace, system, { "session-id": "s-ollama" }))).toEqual({ session: "s-ollama" });
    expect(await sessionOf(() => post(`${inPlace.base.c}/api/v1/chat`, { model: MODEL, input: "hi", max_output_tokens: 1 }, { "x-claude-code-session-id": "s-lms" })))
      .toEqual({ session: "s-lms" });
  });
});
