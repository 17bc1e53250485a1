// Claude Code (`claude -p`, then `claude -p --continue`, then a new `claude -p`) against llamux at its
// defaults on profiles a, b and c, over Anthropic's Messages API; and `llamux launch claude`. The first
// request alone is over 10k tokens (system prompt and tools): profiles a and c grow their 4096-token default
// to hold it, b loads the trained context. The second turn repeats the first and reads it from the cache;
// a new session shares the system prompt and tools (Claude Code's attribution line, which differs per
// session, never reaches the prompt) and reads them from the cache too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RUN_TIMEOUT_MS, claudeEnv, expectCleanRun, removeHome, runAgent, startAgentServer, type AgentRun, type AgentServer, type Profile } from "./agent-harness.ts";

const PROFILES: Profile[] = ["a", "b", "c"];
const servers: Partial<Record<Profile, AgentServer>> = {};
const runs: AgentRun[] = [];

beforeAll(async () => {
  for (const profile of PROFILES) servers[profile] = await startAgentServer(profile);
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s?.stop()));
  runs.forEach(removeHome);
});

interface ClaudeResult { is_error: boolean; usage: { input_tokens: number; cache_read_input_tokens?: number } }

function resultOf(run: AgentRun): ClaudeResult {
  const line = run.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(line) as ClaudeResult;
  } catch {
    throw new Error(`claude printed no JSON result: ${run.stdout.slice(-500)} ${run.stderr.slice(-500)}`);
  }
}

/** The share of the prompt read from the cache, from the run's reported usage. */
const cachedShare = (result: ClaudeResult) => {
  const cached = result.usage.cache_read_input_tokens ?? 0;
  return cached / (cached + result.usage.input_tokens);
};

describe.each(PROFILES)("profile %s", (profile) => {
  test("claude -p, then --continue, then a new session: each completes, and reads what it shares from the cache", async () => {
    const server = servers[profile]!;
    const env = claudeEnv(server.baseUrl);
    const first = await runAgent(server, { argv: ["claude", "-p", "Say hello", "--output-format", "json"], env });
    runs.push(first);
    expectCleanRun(first);
    expect(first.requests.some((line) => line.includes("POST /v1/messages 200"))).toBe(true);
    expect(resultOf(first).is_error).toBe(false);
    const second = await runAgent(server, { argv: ["claude", "-p", "--continue", "And now goodbye", "--output-format", "json"], env, after: first });
    expectCleanRun(second);
    const continued = resultOf(second);
    expect(continued.is_error).toBe(false);
    expect(cachedShare(continued)).toBeGreaterThanOrEqual(0.9);
    // a new session in the same project: the same system prompt and tools, another question
    const third = await runAgent(server, { argv: ["claude", "-p", "What is two plus two?", "--output-format", "json"], env, after: first });
    expectCleanRun(third);
    const fresh = resultOf(third);
    expect(fresh.is_error).toBe(false);
    expect(fresh.usage.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
    // the goal at Claude Code's sizes: at least 70% of a new session's first prompt from the cache
    expect(cachedShare(fresh)).toBeGreaterThanOrEqual(0.7);
  }, 3 * RUN_TIMEOUT_MS);
});

test("llamux launch claude: the agent runs against the server with its model for every role", async () => {
  const server = servers.a!;
  const run = await runAgent(server, { argv: ["llamux", "launch", "claude", "--host", `127.0.0.1:${server.server.port}`, "--", "-p", "Say hello"] });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.every((line) => !line.includes(" 404 "))).toBe(true);
  // what it set: the prompt switches as ollama launch sets them, and the model's largest context (trained: 64k)
  const config = await runAgent(server, { argv: ["llamux", "launch", "claude", "--host", `127.0.0.1:${server.server.port}`, "--config"], after: run });
  expect(config.stdout).toContain("export CLAUDE_CODE_ATTRIBUTION_HEADER=0\n");
  expect(config.stdout).toContain("export CLAUDE_CODE_TOTAL_TOKENS_REMINDER=off\n");
  expect(config.stdout).toContain("export CLAUDE_CODE_MAX_CONTEXT_TOKENS=65536\n");
}, RUN_TIMEOUT_MS);
