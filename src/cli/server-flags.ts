// The `llamux serve` flags and env vars that guard a listener: API keys, extra CORS origins, public
// metrics. Kept apart from serve.ts so each listener's ServerOptions come from one function.
import type { ProfileName } from "../server/profiles.ts";
import { isLoopbackHost, serverOptions, type ServerOptions } from "../server/server-options.ts";
import { UsageError } from "./usage-error.ts";
import { ollamaOrigins } from "../config.ts";

export const serverOptionFlags = {
  "api-key": { type: "string", multiple: true },
  "cors-origins": { type: "string" },
  "allowed-origins": { type: "string" },
  "public-metrics": { type: "boolean" },
} as const;

export const serverOptionsHelp = `      --api-key KEY             require KEY as "Authorization: Bearer KEY" or "X-Api-Key: KEY" (repeat for
                                several keys; env LLAMUX_API_KEY, and VLLM_API_KEY for profile b). Probes
                                (/, /health, /ping, /version, /api/version, /lmstudio-greeting) stay open
      --public-metrics          serve /metrics without the key
      --cors-origins LIST       browser origins allowed besides localhost pages and app shells: a comma
                                list such as https://app.example,chrome-extension://*; "*" allows any site
      --allowed-origins JSON    vLLM's spelling of --cors-origins, as a JSON list: '["https://app.example"]'`;

export interface ServerFlagValues {
  "api-key"?: string[];
  "cors-origins"?: string;
  "allowed-origins"?: string;
  "public-metrics"?: boolean;
}

function allowedOriginsJson(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--allowed-origins must be a JSON list of origins such as '["https://app.example"]', got ${text}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === "string")) {
    throw new UsageError(`--allowed-origins must be a JSON list of strings, got ${text}`);
  }
  return parsed;
}

/** The flag wins; then our own env var; vLLM's env var only for the vLLM profile, as vLLM reads it. */
function apiKeys(values: ServerFlagValues, profile: ProfileName, env: Record<string, string | undefined>): string[] {
  if (values["api-key"]?.length) {
    if (values["api-key"].some((key) => key.trim() === "")) throw new UsageError("--api-key must not be empty");
    return values["api-key"];
  }
  const fromEnv = env.LLAMUX_API_KEY || (profile === "b" ? env.VLLM_API_KEY : undefined);
  return fromEnv ? [fromEnv] : [];
}

export function serverOptionsFromFlags(
  values: ServerFlagValues, profile: ProfileName, bindHost: string, env: Record<string, string | undefined> = process.env,
): ServerOptions {
  const corsOrigins = [
    ...(values["cors-origins"] ?? "").split(",").map((origin) => origin.trim()).filter(Boolean),
    ...(values["allowed-origins"] !== undefined ? allowedOriginsJson(values["allowed-origins"]) : []),
    ...(profile === "a" ? ollamaOrigins(env) : []),
  ];
  return serverOptions({ apiKeys: apiKeys(values, profile, env), corsOrigins, publicMetrics: values["public-metrics"] ?? false, bindHost });
}

/** What to warn about before serving with these options (the anchors' exposed-server incidents). */
export function exposureWarnings(options: ServerOptions): string[] {
  const warnings: string[] = [];
  if (!isLoopbackHost(options.bindHost) && options.apiKeys.length === 0) {
    warnings.push(`bound to ${options.bindHost} without an API key: anyone who can reach this address can use the server (set --api-key or LLAMUX_API_KEY)`);
  }
  if (options.corsOrigins.includes("*")) {
    warnings.push("CORS allows any origin: any website open in a browser on this machine can use the server");
  }
  return warnings;
}
