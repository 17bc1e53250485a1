// Codex (`codex exec`) against llamux at its defaults over the Responses API: a responses provider on
// profile b, `--oss --local-provider ollama` on profile a (Ollama's port probes: /api/tags, /v1/models),
// and `llamux launch codex`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MODEL, RUN_TIMEOUT_MS, expectCleanRun, removeHome, runAgent, startAgentServer, type AgentRun, type AgentServer } from "./agent-harness.ts";

let a: AgentServer;
let b: AgentServer;
const runs: AgentRun[] = [];

beforeAll(async () => {
  [a, b] = [await startAgentServer("a"), await startAgentServer("b")];
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  runs.forEach(removeHome);
});

const exec = ["exec", "--skip-git-repo-check", "-c", "check_for_update_on_startup=false"];

test("codex exec with a responses provider (profile b)", async () => {
  const provider = `model_providers.llamux={name="llamux",base_url="${b.baseUrl}/v1",wire_api="responses"}`;
  const run = await runAgent(b, { argv: ["codex", ...exec, "-c", "model_provider=llamux", "-c", provider, "-m", MODEL, "Say hello"] });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.some((line) => line.includes("POST /v1/responses 200"))).toBe(true);
}, RUN_TIMEOUT_MS);

test("codex exec --oss --local-provider ollama (profile a, Ollama's port probes first)", async () => {
  const run = await runAgent(a, { argv: ["codex", ...exec, "--oss", "--local-provider", "ollama", "-m", MODEL, "Say hello"], env: { CODEX_OSS_PORT: String(a.server.port) } });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.some((line) => line.includes("GET /api/tags 200"))).toBe(true);
  expect(run.requests.some((line) => line.includes("POST /v1/responses 200"))).toBe(true);
}, RUN_TIMEOUT_MS);

test("llamux launch codex", async () => {
  const run = await runAgent(b, { argv: ["llamux", "launch", "codex", "--host", `127.0.0.1:${b.server.port}`, "--", "exec", "--skip-git-repo-check", "Say hello"] });
  runs.push(run);
  expectCleanRun(run);
  expect(run.requests.some((line) => line.includes("POST /v1/responses 200"))).toBe(true);
}, RUN_TIMEOUT_MS);
