// opencode (`opencode run`) against llamux at its defaults on profile c with each of its provider kinds:
// chat completions (@ai-sdk/openai-compatible), Anthropic Messages (@ai-sdk/anthropic) and the Responses
// API (@ai-sdk/openai); and `llamux launch opencode`. A title request goes beside the main one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MODEL, RUN_TIMEOUT_MS, expectCleanRun, removeHome, runAgent, startAgentServer, type AgentRun, type AgentServer } from "./agent-harness.ts";

let c: AgentServer;
const runs: AgentRun[] = [];

beforeAll(async () => {
  c = await startAgentServer("c");
}, 120_000);
afterAll(async () => {
  await c?.stop();
  runs.forEach(removeHome);
});

const kinds = [
  { npm: "@ai-sdk/openai-compatible", route: "POST /v1/chat/completions 200" },
  { npm: "@ai-sdk/anthropic", route: "POST /v1/messages 200" },
  { npm: "@ai-sdk/openai", route: "POST /v1/responses 200" },
];

test.each(kinds)("opencode run with a $npm provider", async ({ npm, route }) => {
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: { llamux: { npm, name: "llamux", options: { baseURL: `${c.baseUrl}/v1`, apiKey: "placeholder" }, models: { [MODEL]: { name: MODEL } } } },
    model: `llamux/${MODEL}`, small_model: `llamux/${MODEL}`, autoupdate: false, share: "disabled",
  };
  const run = await runAgent(c, { argv: ["opencode", "run", "Say hello"], files: { "opencode.json": JSON.stringify(config) } });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.some((line) => line.includes(route))).toBe(true);
}, RUN_TIMEOUT_MS);

test("llamux launch opencode", async () => {
  const run = await runAgent(c, { argv: ["llamux", "launch", "opencode", "--host", `127.0.0.1:${c.server.port}`, "--", "run", "Say hello"] });
  runs.push(run);
  expectCleanRun(run);
}, RUN_TIMEOUT_MS);
