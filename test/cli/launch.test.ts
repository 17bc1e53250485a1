// `llamux launch AGENT`: --config prints the agent's setup (base URL, the model for every role, key), a
// missing agent is an error naming its npm package, an unknown one a usage error. The agents' runs
// against real servers are in test/agents/.
import { expect, test } from "bun:test";
import { join } from "node:path";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");

function launch(args: string[], env: Record<string, string> = {}) {
  const result = Bun.spawnSync([process.execPath, main, "launch", ...args], { env: { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

test("--config prints each agent's setup for the named server and model", () => {
  const target = ["--model", "qwen3:8b", "--host", "127.0.0.1:8000", "--config"];
  const claude = launch(["claude", ...target]);
  expect(claude.code).toBe(0);
  expect(claude.stdout).toContain("export ANTHROPIC_BASE_URL=http://127.0.0.1:8000\n");
  for (const role of ["ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL"]) {
    expect(claude.stdout).toContain(`export ${role}=qwen3:8b\n`);
  }
  const codex = launch(["codex", ...target, "--api-key", "secret"]);
  expect(codex.stdout).toContain('base_url="http://127.0.0.1:8000/v1",wire_api="responses"');
  expect(codex.stdout).toContain("export LLAMUX_API_KEY=secret");
  expect(launch(["opencode", ...target]).stdout).toContain('"model":"llamux/qwen3:8b"');
  expect(launch(["qwen", ...target]).stdout).toContain("export OPENAI_BASE_URL=http://127.0.0.1:8000/v1");
  const cn = launch(["cn", ...target]);
  expect(cn.stdout).toContain("cn --config '<config.yaml>'");
  expect(cn.stdout).toContain('apiBase: "http://127.0.0.1:8000/v1"');
});

test("an agent that is not installed is an error naming its npm package; an unknown agent a usage error", () => {
  const missing = launch(["claude", "--model", "m", "--host", "127.0.0.1:8000"], { PATH: "/nonexistent" });
  expect(missing.code).not.toBe(0);
  expect(missing.stderr).toContain("npm install -g @anthropic-ai/claude-code");
  const unknown = launch(["cursor", "--model", "m"]);
  expect(unknown.code).not.toBe(0);
  expect(unknown.stderr).toContain('Unknown agent "cursor"');
  expect(launch(["--help"]).stdout).toContain("Usage: llamux launch AGENT");
});
