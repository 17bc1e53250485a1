// The real Claude Code CLI's requests (test/fixtures/recordings, made by test/fixtures/record-claude-code.ts:
// `claude -p`, `claude -p --continue`, then a new `claude -p`), sent again to `llamux serve` at its defaults
// with the tiny agent model: once with its own template, which writes Claude Code's system message (sent
// right after the first user message) in place, and once with the same template made strict (a system
// message anywhere but first raises, as Qwen3's and many GGUF templates do). Its attribution line (the first
// system block, whose suffix changes with each session) never reaches the prompt, so a new session's first
// request reads the system prompt and tools it shares with the first session from the cache, and a continued
// session reads almost all of its prompt. On a hybrid model (tiny LFM2), whose recurrent state cannot be cut
// back, the new session's first request reads the shared part up to the first session's last mark before it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHATML_HERMES_STRICT_TEMPLATE as STRICT_TEMPLATE, CHATML_HERMES_TEMPLATE } from "../../scripts/models/templates.ts";
import { renderChatTemplate } from "../../src/chat/template.ts";
import { MODEL, RUN_TIMEOUT_MS, startAgentServer, type AgentServer } from "./agent-harness.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer } from "../server/serve-fixture.ts";
import { RECORDING_FORMAT, replayInit, type RecordedRequest, type Recording } from "../fixtures/recording-proxy.ts";

const recordings = join(import.meta.dir, "..", "fixtures", "recordings");
const file = readdirSync(recordings).find((name) => name.startsWith("claude-code-") && name.endsWith(".json"))!;
const recording = await Bun.file(join(recordings, file)).json() as Recording;

const templateDir = mkdtempSync(join(tmpdir(), "llamux-replay-"));
const servers: Record<string, AgentServer> = {};
beforeAll(async () => {
  writeFileSync(join(templateDir, "strict.jinja"), STRICT_TEMPLATE);
  servers.inPlace = await startAgentServer("a");
  servers.strict = await startAgentServer("a", ["--chat-template", join(templateDir, "strict.jinja")]);
  // the hybrid model, with the agent model's context and template
  const hybrid = await startServer([await ensureModel("tiny-lfm2-agent"), "--served-model-name", MODEL, "--profile", "a"], { LLAMUX_LOG_LEVEL: "info" });
  servers.hybrid = { profile: "a", server: hybrid, baseUrl: hybrid.baseUrl, stop: () => hybrid.stop() };
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  rmSync(templateDir, { recursive: true, force: true });
});
let server: AgentServer;

interface MessagesBody { system?: Array<{ type: string; text: string }>; messages: unknown[]; tools?: unknown[]; [field: string]: unknown }
interface Usage { input_tokens: number; cache_read_input_tokens: number }

const isMessages = (request: RecordedRequest) => request.method === "POST" && request.path.startsWith("/v1/messages") && !request.path.includes("count_tokens");
const firstMessages = (run: string) => recording.runs.find((r) => r.name === run)!.requests.find(isMessages)!;
const bodyOf = (request: RecordedRequest) => request.body as MessagesBody;

async function countTokens(body: MessagesBody): Promise<number> {
  const { model, system, messages, tools } = body;
  const response = await fetch(`${server.baseUrl}/v1/messages/count_tokens`, {
    method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, system, messages, tools }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { input_tokens: number }).input_tokens;
}

/**
 * Sends a recorded request again; for a Messages request, the usage it reports (streamed or not). With
 * `maxTokens`, replies are cut to that many tokens (a random-weight model without the agent model's short
 * replies would write up to the recorded max_tokens).
 */
async function replay(request: RecordedRequest, maxTokens?: number): Promise<{ status: number; usage?: Usage }> {
  const body = maxTokens !== undefined && isMessages(request) ? { ...bodyOf(request), max_tokens: maxTokens } : undefined;
  const response = await fetch(server.baseUrl + request.path, replayInit(body ? { ...request, body } : request));
  const text = await response.text();
  if (!isMessages(request) || response.status !== 200) {
    if (response.status !== request.status) console.error(`${request.path}: ${response.status} ${text.slice(0, 500)}`);
    return { status: response.status };
  }
  if (!bodyOf(request).stream) return { status: response.status, usage: (JSON.parse(text) as { usage: Usage }).usage };
  const usages = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as { type: string; usage?: Usage })
    .filter((event) => event.type === "message_delta" && event.usage);
  return { status: response.status, usage: usages.at(-1)!.usage! };
}

test("the recording is Claude Code's, and its sessions' first system blocks differ only in the attribution line", () => {
  expect(recording.format).toBe(RECORDING_FORMAT);
  expect(recording.runs.map((run) => run.name)).toEqual(["first", "continue", "new-session"]);
  const [first, fresh] = [bodyOf(firstMessages("first")).system!, bodyOf(firstMessages("new-session")).system!];
  expect(first[0]!.text).toStartWith("x-anthropic-billing-header:");
  expect(fresh[0]!.text).toStartWith("x-anthropic-billing-header:");
  expect(first[0]!.text).not.toBe(fresh[0]!.text);
  expect(first.slice(1)).toEqual(fresh.slice(1));
  expect(bodyOf(firstMessages("first")).tools).toEqual(bodyOf(firstMessages("new-session")).tools);
});

test("the strict template refuses the conversation as Claude Code sends it (a system message after the first user message)", () => {
  const messages = [{ role: "system", content: "s" }, { role: "user", content: "Say hello" }, { role: "system", content: "# Environment" }];
  expect(() => renderChatTemplate(STRICT_TEMPLATE, messages)).toThrow("System message must be at the beginning");
  expect(() => renderChatTemplate(CHATML_HERMES_TEMPLATE, messages)).not.toThrow();
});

/** Sends the recording's requests in order; each run's Messages usages. */
async function replayAll(maxTokens?: number): Promise<Record<string, Usage[]>> {
  const usages: Record<string, Usage[]> = {};
  for (const run of recording.runs) {
    usages[run.name] = [];
    for (const request of run.requests) {
      const { status, usage } = await replay(request, maxTokens);
      expect(`${request.method} ${request.path} ${status}`).toBe(`${request.method} ${request.path} ${request.status}`);
      if (usage) usages[run.name]!.push(usage);
    }
  }
  return usages;
}

const share = (usage: Usage) => usage.cache_read_input_tokens / (usage.cache_read_input_tokens + usage.input_tokens);

describe.each([["writes system messages in place", "inPlace"], ["refuses later system messages", "strict"]])("a template that %s", (_, which) => {
  beforeAll(() => {
    server = servers[which]!;
  });

  test("the attribution line never reaches the prompt: count_tokens is the same without it", async () => {
    for (const run of ["first", "new-session"]) {
      const body = bodyOf(firstMessages(run));
      const without = { ...body, system: body.system!.filter((block) => !block.text.startsWith("x-anthropic-billing-header:")) };
      expect(await countTokens(body)).toBe(await countTokens(without));
    }
  }, RUN_TIMEOUT_MS);

  test("replayed in order: --continue reads ≥ 90% of its prompt from the cache, a new session its shared system prompt and tools", async () => {
    const usages = await replayAll();
    expect(share(usages.continue![0]!)).toBeGreaterThanOrEqual(0.9);
    // the part a new session shares: its system prompt and tools, before any message
    const fresh = bodyOf(firstMessages("new-session"));
    const shared = await countTokens({ ...fresh, messages: [{ role: "user", content: "x" }] }) - 16;
    const newSession = usages["new-session"]![0]!;
    expect(shared).toBeGreaterThan(5000);
    expect(newSession.cache_read_input_tokens).toBeGreaterThanOrEqual(shared);
  }, 3 * RUN_TIMEOUT_MS);
});

describe("a hybrid model (tiny LFM2), whose recurrent state cannot be cut back", () => {
  beforeAll(() => {
    server = servers.hybrid!;
  });

  test("replayed in order: a new session's first request reads ≥ 70% of its prompt, a continued one ≥ 90%", async () => {
    const usages = await replayAll(16);
    expect(share(usages.continue![0]!)).toBeGreaterThanOrEqual(0.9);
    const newSession = usages["new-session"]![0]!;
    expect(newSession.cache_read_input_tokens + newSession.input_tokens).toBeGreaterThan(5000);
    expect(share(newSession)).toBeGreaterThanOrEqual(0.7);
  }, 3 * RUN_TIMEOUT_MS);
});
