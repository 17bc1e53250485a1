// The `llamux serve` flags and env vars that guard a listener: API keys, extra CORS origins, public
// metrics. Kept apart from serve.ts so each listener's ServerOptions come from one function.
import type { ProfileName } from "../server/profiles/profile.ts";
import {
  DEFAULT_BODY_LIMIT_BYTES, DEFAULT_IDLE_TIMEOUT_SECONDS, isLoopbackHost, serverOptions, type ServerOptions,
} from "../server/server-options.ts";
import { UsageError, wholeNumberOption } from "../usage-error.ts";
import { ollamaOrigins } from "../config.ts";

const MIB = 1024 * 1024;

export const serverOptionFlags = {
  "api-key": { type: "string", multiple: true },
  "cors-origins": { type: "string" },
  "allowed-origins": { type: "string" },
  "public-metrics": { type: "boolean" },
  "max-body-size": { type: "string" },
  "idle-timeout": { type: "string" },
} as const;

export const serverOptionsHelp = `      --api-key KEY             require KEY as "Authorization: Bearer KEY" or "X-Api-Key: KEY" (repeat for
                                several keys; env LLAMUX_API_KEY, and VLLM_API_KEY for profile b). Probes
                                (/, /health, /ping, /version, /api/version, /lmstudio-greeting) stay open
      --public-metrics          serve /metrics without the key
      --cors-origins LIST       browser origins allowed besides localhost pages and app shells: a comma
                                list such as https://app.example,chrome-extension://*; "*" allows any site
      --allowed-origins JSON    vLLM's spelling of --cors-origins, as a JSON list: '["https://app.example"]'
      --max-body-size MIB       largest request body in MiB (default ${DEFAULT_BODY_LIMIT_BYTES / MIB}); blob uploads stream to disk
                                and are not limited
      --idle-timeout SECONDS    close a connection that sends nothing for this long while the server waits
                                on it: headers, a body, an idle keep-alive (default ${DEFAULT_IDLE_TIMEOUT_SECONDS}, at most 255);
                                a request whose body has arrived is never cut, however long it generates`;

export interface ServerFlagValues {
  "api-key"?: string[];
  "cors-origins"?: string;
  "allowed-origins"?: string;
  "public-metrics"?: boolean;
  "max-body-size"?: string;
  "idle-timeout"?: string;
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
  const maxBodyMib = wholeNumberOption(values["max-body-size"], "max-body-size", 1, 1024 * 1024);
  const idleTimeout = wholeNumberOption(values["idle-timeout"], "idle-timeout", 1, 255);
  return serverOptions({
    apiKeys: apiKeys(values, profile, env), corsOrigins, publicMetrics: values["public-metrics"] ?? false, bindHost,
    ...(maxBodyMib !== undefined ? { bodyLimitBytes: maxBodyMib * MIB } : {}),
    ...(idleTimeout !== undefined ? { idleTimeoutSeconds: idleTimeout } : {}),
  });
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
