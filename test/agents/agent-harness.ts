// Runs the coding-agent CLIs from npm (pinned in devDependencies) headless against a real `llamux serve`
// started at its defaults (no context flag), as a new user would. Each run gets a fresh HOME and project
// folder, the agents' switches for telemetry and update checks off, npm offline, and a proxy that refuses
// everything but loopback. A run passes when the CLI exits 0 and the server logged no 4xx or 5xx answer
// (nor a failed stream) while it ran.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";

export type Profile = "a" | "b" | "c";
export const MODEL = "agent";

const root = join(import.meta.dir, "..", "..");
/** The agents' commands, and Node 22 (the registry's node@22) before the machine's node. */
const BIN = join(root, "node_modules", ".bin");
const MAIN = join(root, "src", "main.ts");
/** A loopback port nothing listens on: a proxy there fails every request that is not to loopback at once. */
const DEAD_PROXY = "http://127.0.0.1:9";
/** Generous: on 2 busy cores an agent's first request (10-25k prompt tokens) takes a while. */
export const RUN_TIMEOUT_MS = 300_000;

export interface AgentServer {
  profile: Profile;
  server: RunningServer;
  baseUrl: string;
  stop(): Promise<void>;
}

/** `llamux serve MODEL --profile P` and nothing else that sizes the context: the server's defaults (`extra` adds flags). */
export async function startAgentServer(profile: Profile, extra: string[] = []): Promise<AgentServer> {
  const model = await ensureModel("tiny-llama-agent");
  const server = await startServer([model, "--served-model-name", MODEL, "--profile", profile, ...extra], { LLAMUX_LOG_LEVEL: "info" });
  return { profile, server, baseUrl: server.baseUrl, stop: () => server.stop() };
}

export interface AgentRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The server's request log lines written while the agent ran. */
  requests: string[];
  /** Those that answered 4xx or 5xx, or whose stream failed. */
  failures: string[];
  home: string;
  project: string;
  /** What the server logged while the agent ran. */
  serverLog: string;
}

export interface AgentRunOptions {
  /** The command, its first word looked up in node_modules/.bin. */
  argv: string[];
  env?: Record<string, string>;
  /** Files to write into the project folder (or, with a leading "~/", into HOME) before the run. */
  files?: Record<string, string>;
  /** Reuse the HOME and project folder of an earlier run (a second turn). */
  after?: AgentRun;
}

/** What every agent gets: an empty HOME, no telemetry, no update checks, nothing beyond loopback. */
function baseEnv(home: string): Record<string, string> {
  return {
    PATH: `${BIN}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    TMPDIR: join(home, "tmp"),
    LANG: "C.UTF-8",
    TERM: "dumb",
    CI: "1",
    DO_NOT_TRACK: "1",
    NPM_CONFIG_OFFLINE: "true",
    HTTP_PROXY: DEAD_PROXY, HTTPS_PROXY: DEAD_PROXY, http_proxy: DEAD_PROXY, https_proxy: DEAD_PROXY,
    NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost",
    // Claude Code
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1", DISABLE_ERROR_REPORTING: "1",
    // opencode
    OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1", OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    // Continue
    CONTINUE_CLI_ENABLE_TELEMETRY: "0", CONTINUE_METRICS_ENABLED: "0",
  };
}

/** Claude Code pointed at a server (or a proxy in front of one), with the served model for every role. */
export function claudeEnv(baseUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_AUTH_TOKEN: "placeholder",
    ANTHROPIC_MODEL: MODEL,
    ANTHROPIC_DEFAULT_OPUS_MODEL: MODEL, ANTHROPIC_DEFAULT_SONNET_MODEL: MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
    CLAUDE_CODE_SUBAGENT_MODEL: MODEL,
  };
}

/** Qwen Code's settings: telemetry, usage statistics and update checks off. */
export const QWEN_SETTINGS = JSON.stringify({
  telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false }, general: { disableAutoUpdate: true, disableUpdateNag: true },
});

const REQUEST_LINE = /\[http\] (GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ (\d{3}) /;

export async function runAgent(server: AgentServer, options: AgentRunOptions): Promise<AgentRun> {
  const home = options.after?.home ?? mkdtempSync(join(tmpdir(), "llamux-agent-home-"));
  const project = options.after?.project ?? join(home, "project");
  mkdirSync(join(home, "tmp"), { recursive: true });
  mkdirSync(project, { recursive: true });
  for (const [name, content] of Object.entries(options.files ?? {})) {
    const path = name.startsWith("~/") ? join(home, name.slice(2)) : join(project, name);
    mkdirSync(join(path, ".."), { recursive: true });
    await Bun.write(path, content);
  }
  const logStart = server.server.stderr().length;
  const [command, ...args] = options.argv;
  const child = Bun.spawn([command === "llamux" ? process.execPath : join(BIN, command!), ...(command === "llamux" ? [MAIN] : []), ...args], {
    cwd: project, env: { ...baseEnv(home), ...options.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe",
  });
  // Killed before the test's own timeout: a timed-out test makes bun kill every process the file started,
  // the shared server too, and every later test of the file would fail for that instead of its own reason.
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS - 30_000);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  const barrier = await logBarrier(server);
  const serverLog = server.server.stderr().slice(logStart);
  const requests = serverLog.split("\n").filter((line) => REQUEST_LINE.test(line) && !line.includes(barrier));
  const failures = requests.filter((line) => /^[45]/.test(REQUEST_LINE.exec(line)![2]!) || line.includes("stream failed"));
  return { exitCode, stdout, stderr, requests, failures, home, project, serverLog };
}

/**
 * Makes a request of its own and waits for its log line: the server writes its log in order, so every
 * line of the agent's requests has arrived by then. Returns the marker path (a 404, left out).
 */
async function logBarrier(server: AgentServer): Promise<string> {
  const marker = `/llamux-log-barrier-${crypto.randomUUID()}`;
  try {
    await (await fetch(server.baseUrl + marker)).text();
  } catch (error) {
    throw new Error(`the server stopped answering (${(error as Error).message}); its log ends: ${server.server.stderr().slice(-2000)}`);
  }
  const deadline = Date.now() + 10_000;
  while (!server.server.stderr().includes(marker)) {
    if (Date.now() > deadline) throw new Error("the server's request log did not show the barrier request");
    await Bun.sleep(10);
  }
  return marker;
}

/** Why a run failed, for the test's message: its exit code, the failed requests, the end of its output. */
export function describeRun(run: AgentRun): string {
  return `exit ${run.exitCode}; failed requests: ${JSON.stringify(run.failures)}; requests: ${run.requests.length}\n` +
    `stdout: ${run.stdout.slice(-1500)}\nstderr: ${run.stderr.slice(-1500)}\nserver log meanwhile: ${run.serverLog.slice(-1500)}`;
}

/** Throws unless the CLI exited 0, made at least one request, and no request failed. */
export function expectCleanRun(run: AgentRun): void {
  if (run.exitCode !== 0 || run.failures.length > 0 || run.requests.length === 0) throw new Error(`agent run failed: ${describeRun(run)}`);
}

export function removeHome(run: AgentRun | undefined): void {
  if (run) rmSync(run.home, { recursive: true, force: true });
}
