// Continue's CLI (`cn -p`) against llamux at its defaults on profile a, through Continue's Ollama
// provider as its users set it up; and `llamux launch cn` (Continue's OpenAI provider).
import { afterAll, beforeAll, test } from "bun:test";
import { MODEL, RUN_TIMEOUT_MS, expectCleanRun, removeHome, runAgent, startAgentServer, type AgentRun, type AgentServer } from "./agent-harness.ts";

let a: AgentServer;
const runs: AgentRun[] = [];

beforeAll(async () => {
  a = await startAgentServer("a");
}, 120_000);
afterAll(async () => {
  await a?.stop();
  runs.forEach(removeHome);
});

test("cn -p with an Ollama model", async () => {
  const config = [
    "name: llamux", "version: 1.0.0", "schema: v1", "models:",
    `  - name: ${MODEL}`, "    provider: ollama", `    model: ${MODEL}`, `    apiBase: ${a.baseUrl}`, "    roles: [chat, edit, apply, summarize]", "",
  ].join("\n");
  const run = await runAgent(a, { argv: ["cn", "-p", "Say hello", "--config", "config.yaml"], files: { "config.yaml": config } });
  runs.push(run);
  expectCleanRun(run);
}, RUN_TIMEOUT_MS);

test("llamux launch cn", async () => {
  const run = await runAgent(a, { argv: ["llamux", "launch", "cn", "--host", `127.0.0.1:${a.server.port}`, "--", "-p", "Say hello"] });
  runs.push(run);
  expectCleanRun(run);
}, RUN_TIMEOUT_MS);
