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

test("claude: attribution line and token countdown off, and its window set to the server's largest context for the model", async () => {
  const asked: string[] = [];
  let maxContext = 65536;
  const server = Bun.serve({
    hostname: "127.0.0.1", port: 0,
    fetch(request) {
      asked.push(new URL(request.url).pathname + new URL(request.url).search);
      return Response.json({ model: "agent", context_length: null, max_context_length: maxContext, bound_by: "trained" });
    },
  });
  const config = async () => {
    const child = Bun.spawn([process.execPath, main, "launch", "claude", "--model", "agent", "--host", `127.0.0.1:${server.port}`, "--config"], {
      env: { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" }, stdout: "pipe", stderr: "pipe",
    });
    return new Response(child.stdout).text();
  };
  try {
    const small = await config();
    expect(asked).toEqual(["/api/v1/server/context?model=agent"]);
    expect(small).toContain("export CLAUDE_CODE_ATTRIBUTION_HEADER=0\n");
    expect(small).toContain("export CLAUDE_CODE_TOTAL_TOKENS_REMINDER=off\n");
    expect(small).toContain("export CLAUDE_CODE_MAX_CONTEXT_TOKENS=65536\n");
    // below Claude Code's 100k minimum it would be read as 100k: left out
    expect(small).not.toContain("CLAUDE_CODE_AUTO_COMPACT_WINDOW");
    maxContext = 262144;
    const large = await config();
    expect(large).toContain("export CLAUDE_CODE_MAX_CONTEXT_TOKENS=262144\n");
    expect(large).toContain("export CLAUDE_CODE_AUTO_COMPACT_WINDOW=262144\n");
  } finally {
    server.stop(true);
  }
  // a server that does not say: no window is set
  expect(launch(["claude", "--model", "m", "--host", "127.0.0.1:9", "--config"]).stdout).not.toContain("CLAUDE_CODE_MAX_CONTEXT_TOKENS");
});
