// `llamux launch AGENT`: runs a coding agent (Claude Code, Codex, opencode, Qwen Code, Continue's cn)
// pointed at the running llamux server, as `ollama launch` does for Ollama: base URL, the model for every
// role the agent has, and the key. `--config` prints what it would set instead of running the agent.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AGENT_NAMES, AGENTS, resolveFiles, type AgentPlan, type AgentSpec } from "./launch/agents.ts";
import { serverUrl } from "./server-client.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const launchFlags = {
  model: { type: "string", value: "MODEL", help: "the served model to use (default: the first one /v1/models lists)" },
  host: { type: "string", value: "HOST", help: "the server, host[:port] (default: LLAMUX_HOST, OLLAMA_HOST or 127.0.0.1:11434)" },
  "api-key": { type: "string", value: "KEY", help: "the server's --api-key (default: LLAMUX_API_KEY, else a placeholder)" },
  config: { type: "boolean", help: "print the environment, arguments and files instead of running the agent" },
  ...helpFlag,
} as const satisfies Flags;

export const launchPage: HelpPage = {
  usage: ["llamux launch AGENT [--model MODEL] [--config] [-- AGENT-ARGS...]"],
  description: `Runs a coding agent against the running llamux server (LLAMUX_HOST, or OLLAMA_HOST, default
127.0.0.1:11434; --host to name another, such as 127.0.0.1:8000 for profile b), with the server's
model for every role the agent has. The agent must be installed (npm install -g PACKAGE).`,
  sections: [{ title: "Agents", items: AGENT_NAMES.map((name) => [name, `${AGENTS[name]!.npmPackage}: ${AGENTS[name]!.api}`]) }],
  flags: launchFlags,
  notes: 'Arguments after -- go to the agent, such as: llamux launch claude -- -p "hello"',
};

export const launchHelp = renderHelp(launchPage);

/** The first model the server lists, for a launch that names none. */
async function firstModel(baseUrl: string, apiKey: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(5000) });
  } catch (error) {
    throw new Error(`Cannot reach a llamux server at ${baseUrl} (${(error as Error).message}): start one with \`llamux serve MODEL\`, or name it with --host`);
  }
  if (!response.ok) throw new Error(`Cannot list the models of ${baseUrl}: it answered ${response.status}${response.status === 401 ? " (give its key with --api-key or LLAMUX_API_KEY)" : ""}`);
  const { data } = await response.json() as { data?: Array<{ id: string }> };
  const id = data?.[0]?.id;
  if (!id) throw new Error(`The server at ${baseUrl} serves no model: start it with one (\`llamux serve MODEL\`) or name one with --model`);
  return id;
}

/** The most context the server gives the model (GET /api/v1/server/context); undefined where it does not say. */
async function maxContextLength(baseUrl: string, apiKey: string, model: string): Promise<number | undefined> {
  try {
    const response = await fetch(`${baseUrl}/api/v1/server/context?model=${encodeURIComponent(model)}`, {
      headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(5000),
    });
    if (!response.ok) return undefined;
    const { max_context_length: tokens } = await response.json() as { max_context_length?: unknown };
    return typeof tokens === "number" && Number.isInteger(tokens) && tokens > 0 ? tokens : undefined;
  } catch {
    return undefined;
  }
}

/** Shell text that sets the plan's variables, runs the agent, and the files it reads. */
function describePlan(agent: AgentSpec, plan: AgentPlan, extra: string[]): string {
  const quote = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);
  const lines = Object.entries(plan.env).map(([key, value]) => `export ${key}=${quote(value)}`);
  lines.push([agent.command, ...plan.args, ...extra].map(quote).join(" "));
  for (const [name, content] of Object.entries(plan.files)) lines.push("", `# ${name}`, content.trimEnd());
  return lines.join("\n");
}

function onPath(command: string, env: Record<string, string | undefined>): boolean {
  return Bun.which(command, { PATH: env.PATH ?? "" }) !== null;
}

export async function launchCommand(args: string[]): Promise<number> {
  const split = args.indexOf("--");
  const own = split >= 0 ? args.slice(0, split) : args;
  const passed = split >= 0 ? args.slice(split + 1) : [];
  const { values, positionals } = parseArgs({
    args: own, allowPositionals: true, strict: true,
    options: launchFlags,
  });
  if (values.help) {
    console.log(launchHelp);
    return 0;
  }
  const [name, ...rest] = positionals;
  if (!name) throw new UsageError(`launch needs an AGENT: ${AGENT_NAMES.join(", ")}`);
  const agent = AGENTS[name];
  if (!agent) throw new UsageError(`Unknown agent "${name}": llamux launches ${AGENT_NAMES.join(", ")}`);
  const baseUrl = values.host ? serverUrl({ LLAMUX_HOST: values.host }) : serverUrl();
  const apiKey = values["api-key"] ?? process.env.LLAMUX_API_KEY ?? "llamux";
  const model = values.model ?? await firstModel(baseUrl, apiKey);
  const extra = [...rest, ...passed];
  const contextLength = await maxContextLength(baseUrl, apiKey, model);
  const plan = agent.plan({ baseUrl, model, apiKey, ...(contextLength !== undefined ? { maxContextLength: contextLength } : {}) });

  if (values.config) {
    console.log(describePlan(agent, resolveFiles(plan, (file) => `<${file}>`), extra));
    return 0;
  }
  if (!onPath(agent.command, process.env)) {
    throw new Error(`Cannot launch ${name}: "${agent.command}" is not installed (not on PATH); install it with \`npm install -g ${agent.npmPackage}\``);
  }
  const dir = Object.keys(plan.files).length ? mkdtempSync(join(tmpdir(), `llamux-launch-${name}-`)) : undefined;
  try {
    const resolved = resolveFiles(plan, (file) => join(dir!, file));
    for (const [file, content] of Object.entries(plan.files)) writeFileSync(join(dir!, file), content, { mode: 0o600 });
    const child = Bun.spawn([agent.command, ...resolved.args, ...extra], { env: { ...process.env, ...resolved.env }, stdio: ["inherit", "inherit", "inherit"] });
    // the agent owns the terminal: Ctrl-C goes to it, and llamux waits for it to end
    const ignore = () => {};
    process.on("SIGINT", ignore);
    try {
      return await child.exited;
    } finally {
      process.off("SIGINT", ignore);
    }
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
