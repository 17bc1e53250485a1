// What each coding agent needs to talk to a llamux server, after `ollama launch`: the environment, the
// arguments placed before the user's own, and the files it reads. Pure: `llamux launch` writes the
// files, runs the agent and prints the same plan for --config.

export interface AgentTarget {
  /** The server's root, such as http://127.0.0.1:11434. */
  baseUrl: string;
  /** The served model, used for every role the agent has (main, small and background requests). */
  model: string;
  /** The server's API key, or a placeholder when it needs none (agents insist on one). */
  apiKey: string;
  /** The most context the server gives the model (what it would grow it to), when the server says. */
  maxContextLength?: number;
}

export interface AgentPlan {
  /** Variables set for the agent (added to the caller's environment). */
  env: Record<string, string>;
  /** Arguments before the user's. */
  args: string[];
  /** Files the plan refers to, by a name the launcher turns into a path: `{file:NAME}` in env and args. */
  files: Record<string, string>;
}

export interface AgentSpec {
  /** The command on PATH. */
  command: string;
  /** The npm package that provides it. */
  npmPackage: string;
  /** Which API it speaks to llamux. */
  api: string;
  plan(target: AgentTarget): AgentPlan;
}

const v1 = (target: AgentTarget) => `${target.baseUrl}/v1`;

/** The smallest CLAUDE_CODE_AUTO_COMPACT_WINDOW Claude Code 2.1 takes; it reads a smaller one as this. */
const CLAUDE_MIN_COMPACT_WINDOW = 100_000;

/**
 * Claude Code's window for the model: for a model name it does not know it assumes 1M tokens and never
 * compacts before the server refuses the prompt. CLAUDE_CODE_MAX_CONTEXT_TOKENS is its window for such a
 * model; CLAUDE_CODE_AUTO_COMPACT_WINDOW, where it is large enough to be taken, says the same for compaction.
 */
function claudeContextWindow(tokens: number | undefined): Record<string, string> {
  if (tokens === undefined) return {};
  return {
    CLAUDE_CODE_MAX_CONTEXT_TOKENS: String(tokens),
    ...(tokens >= CLAUDE_MIN_COMPACT_WINDOW ? { CLAUDE_CODE_AUTO_COMPACT_WINDOW: String(tokens) } : {}),
  };
}

export const AGENTS: Record<string, AgentSpec> = {
  claude: {
    command: "claude",
    npmPackage: "@anthropic-ai/claude-code",
    api: "Anthropic Messages (/v1/messages)",
    plan: (target) => ({
      env: {
        ANTHROPIC_BASE_URL: target.baseUrl,
        ANTHROPIC_AUTH_TOKEN: target.apiKey,
        ANTHROPIC_MODEL: target.model,
        ANTHROPIC_DEFAULT_OPUS_MODEL: target.model,
        ANTHROPIC_DEFAULT_SONNET_MODEL: target.model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: target.model,
        CLAUDE_CODE_SUBAGENT_MODEL: target.model,
        // a local server: no telemetry, error reports or update checks to Anthropic
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        // as `ollama launch`: no attribution line at the top of the system prompt (the server leaves it
        // out anyway) and no token countdown in it, either of which changes the prompt's start
        CLAUDE_CODE_ATTRIBUTION_HEADER: "0",
        CLAUDE_CODE_TOTAL_TOKENS_REMINDER: "off",
        ...claudeContextWindow(target.maxContextLength),
      },
      args: [],
      files: {},
    }),
  },
  codex: {
    command: "codex",
    npmPackage: "@openai/codex",
    api: "OpenAI Responses (/v1/responses)",
    plan: (target) => ({
      env: { LLAMUX_API_KEY: target.apiKey },
      args: [
        "-c", "model_provider=llamux",
        "-c", `model_providers.llamux={name="llamux",base_url=${JSON.stringify(v1(target))},wire_api="responses",env_key="LLAMUX_API_KEY"}`,
        "-c", "check_for_update_on_startup=false",
        "-m", target.model,
      ],
      files: {},
    }),
  },
  opencode: {
    command: "opencode",
    npmPackage: "opencode-ai",
    api: "OpenAI chat completions (/v1/chat/completions)",
    plan: (target) => ({
      env: {
        OPENCODE_CONFIG_CONTENT: JSON.stringify({
          provider: {
            llamux: {
              npm: "@ai-sdk/openai-compatible", name: "llamux",
              options: { baseURL: v1(target), apiKey: target.apiKey },
              models: { [target.model]: { name: target.model } },
            },
          },
          model: `llamux/${target.model}`,
          small_model: `llamux/${target.model}`,
          autoupdate: false,
          share: "disabled",
        }),
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
      },
      args: [],
      files: {},
    }),
  },
  qwen: {
    command: "qwen",
    npmPackage: "@qwen-code/qwen-code",
    api: "OpenAI chat completions (/v1/chat/completions)",
    plan: (target) => ({
      env: { OPENAI_BASE_URL: v1(target), OPENAI_API_KEY: target.apiKey, OPENAI_MODEL: target.model },
      args: ["--auth-type", "openai", "--model", target.model],
      files: {},
    }),
  },
  cn: {
    command: "cn",
    npmPackage: "@continuedev/cli",
    api: "OpenAI chat completions (/v1/chat/completions)",
    plan: (target) => ({
      env: {},
      args: ["--config", "{file:config.yaml}"],
      files: {
        "config.yaml": [
          "name: llamux",
          "version: 1.0.0",
          "schema: v1",
          "models:",
          `  - name: ${JSON.stringify(target.model)}`,
          "    provider: openai",
          `    model: ${JSON.stringify(target.model)}`,
          `    apiBase: ${JSON.stringify(v1(target))}`,
          `    apiKey: ${JSON.stringify(target.apiKey)}`,
          "    roles: [chat, edit, apply, summarize]",
          "",
        ].join("\n"),
      },
    }),
  },
};

export const AGENT_NAMES = Object.keys(AGENTS);

/** The plan with `{file:NAME}` replaced by each file's path. */
export function resolveFiles(plan: AgentPlan, pathOf: (name: string) => string): AgentPlan {
  const fill = (text: string) => text.replace(/\{file:([^}]+)\}/g, (_, name: string) => pathOf(name));
  return {
    env: Object.fromEntries(Object.entries(plan.env).map(([key, value]) => [key, fill(value)])),
    args: plan.args.map(fill),
    files: plan.files,
  };
}
