// Claude Code (`claude -p`, then `claude -p --continue`) against llamux at its defaults on profiles a, b
// and c, over Anthropic's Messages API; and `llamux launch claude`. The first request alone is over 10k
// tokens (system prompt and tools): profiles a and c grow their 4096-token default to hold it, b loads
// the trained context. The second turn repeats the first and reports the reused prompt as cache reads.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MODEL, RUN_TIMEOUT_MS, expectCleanRun, removeHome, runAgent, startAgentServer, type AgentRun, type AgentServer, type Profile } from "./agent-harness.ts";

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

const claudeEnv = (server: AgentServer) => ({
  ANTHROPIC_BASE_URL: server.baseUrl,
  ANTHROPIC_AUTH_TOKEN: "placeholder",
  ANTHROPIC_MODEL: MODEL,
  ANTHROPIC_DEFAULT_OPUS_MODEL: MODEL, ANTHROPIC_DEFAULT_SONNET_MODEL: MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
  CLAUDE_CODE_SUBAGENT_MODEL: MODEL,
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

describe.each(PROFILES)("profile %s", (profile) => {
  test("claude -p, then --continue: both turns complete, the second reads its prompt from the cache", async () => {
    const server = servers[profile]!;
    const first = await runAgent(server, { argv: ["claude", "-p", "Say hello", "--output-format", "json"], env: claudeEnv(server) });
    runs.push(first);
    expectCleanRun(first);
    expect(first.requests.some((line) => line.includes("POST /v1/messages 200"))).toBe(true);
    expect(resultOf(first).is_error).toBe(false);
    const second = await runAgent(server, { argv: ["claude", "-p", "--continue", "And now goodbye", "--output-format", "json"], env: claudeEnv(server), after: first });
    expectCleanRun(second);
    const result = resultOf(second);
    expect(result.is_error).toBe(false);
    expect(result.usage.cache_read_input_tokens ?? 0).toBeGreaterThan(1000);
  }, 2 * RUN_TIMEOUT_MS);
});

test("llamux launch claude: the agent runs against the server with its model for every role", async () => {
  const server = servers.a!;
  const run = await runAgent(server, { argv: ["llamux", "launch", "claude", "--host", `127.0.0.1:${server.server.port}`, "--", "-p", "Say hello"] });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.every((line) => !line.includes(" 404 "))).toBe(true);
}, RUN_TIMEOUT_MS);
