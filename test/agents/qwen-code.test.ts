// Qwen Code (`qwen PROMPT`, headless) against llamux at its defaults on profile b with each of its auth
// types: openai (chat completions), openai-responses (Responses API) and anthropic (Messages API, with
// a thinking budget as large as max_tokens); and `llamux launch qwen`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MODEL, QWEN_SETTINGS, RUN_TIMEOUT_MS, expectCleanRun, removeHome, runAgent, startAgentServer, type AgentRun, type AgentServer } from "./agent-harness.ts";

let b: AgentServer;
const runs: AgentRun[] = [];

beforeAll(async () => {
  b = await startAgentServer("b");
}, 120_000);
afterAll(async () => {
  await b?.stop();
  runs.forEach(removeHome);
});

const authTypes = [
  { auth: "openai", route: "POST /v1/chat/completions 200" },
  { auth: "openai-responses", route: "POST /v1/responses 200" },
  { auth: "anthropic", route: "POST /v1/messages 200" },
];

test.each(authTypes)("qwen --auth-type $auth", async ({ auth, route }) => {
  const env = {
    OPENAI_BASE_URL: `${b.baseUrl}/v1`, OPENAI_API_KEY: "placeholder", OPENAI_MODEL: MODEL,
    ANTHROPIC_BASE_URL: b.baseUrl, ANTHROPIC_API_KEY: "placeholder", ANTHROPIC_MODEL: MODEL,
  };
  const run = await runAgent(b, { argv: ["qwen", "--auth-type", auth, "--model", MODEL, "Say hello"], env, files: { "~/.qwen/settings.json": QWEN_SETTINGS } });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.some((line) => line.includes(route))).toBe(true);
}, RUN_TIMEOUT_MS);

test("llamux launch qwen", async () => {
  const run = await runAgent(b, {
    argv: ["llamux", "launch", "qwen", "--host", `127.0.0.1:${b.server.port}`, "--", "Say hello"], files: { "~/.qwen/settings.json": QWEN_SETTINGS },
  });
  runs.push(run);
  expectCleanRun(run);
}, RUN_TIMEOUT_MS);
