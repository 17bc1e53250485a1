// The `llamux serve` flags and env vars that guard a listener: API keys (plain ones and the keys file),
// extra CORS origins, public metrics. Kept apart from serve.ts so each listener's ServerOptions come from
// one function.
import { profiles, type ProfileName } from "../server/profiles/index.ts";
import {
  DEFAULT_BODY_LIMIT_BYTES, DEFAULT_IDLE_TIMEOUT_SECONDS, isLoopbackHost, keysRequired, serverOptions, type ServerOptions,
} from "../server/server-options.ts";
import { KeyAccess } from "../keys/key-access.ts";
import { defaultKeysPath, usagePathFor } from "../keys/key-file.ts";
import { KeyRing } from "../keys/key-ring.ts";
import { UsageBook } from "../keys/usage-book.ts";
import { UsageError, wholeNumberOption } from "../usage-error.ts";
import { ollamaOrigins } from "../config.ts";

const MIB = 1024 * 1024;

export const serverOptionFlags = {
  "api-key": { type: "string", multiple: true },
  "keys-file": { type: "string" },
  "cors-origins": { type: "string" },
  "allowed-origins": { type: "string" },
  "public-metrics": { type: "boolean" },
  "max-body-size": { type: "string" },
  "idle-timeout": { type: "string" },
} as const;

export const serverOptionsHelp = `      --api-key KEY             require KEY as "Authorization: Bearer KEY" or "X-Api-Key: KEY" (repeat for
                                several keys; env LLAMUX_API_KEY, and VLLM_API_KEY for profile b). Probes
                                (/, /health, /ping, /version, /api/version, /lmstudio-greeting) stay open.
                                Such a key may do everything; named keys with scopes and limits are in the
                                keys file (see "llamux keys --help")
      --keys-file FILE          the named keys (default $XDG_CONFIG_HOME/llamux/keys.json, read when it
                                exists and again within a second of any change; once read, requests need
                                a key); their usage is kept beside it in keys.usage.json
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
  "keys-file"?: string;
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

/** The flag wins; then our own env var; then the anchor's own (vLLM's VLLM_API_KEY on its profile, as vLLM reads it). */
function apiKeys(values: ServerFlagValues, profile: ProfileName, env: Record<string, string | undefined>): string[] {
  if (values["api-key"]?.length) {
    if (values["api-key"].some((key) => key.trim() === "")) throw new UsageError("--api-key must not be empty");
    return values["api-key"];
  }
  const anchorVariable = profiles[profile].apiKeyVariable;
  const fromEnv = env.LLAMUX_API_KEY || (anchorVariable ? env[anchorVariable] : undefined);
  return fromEnv ? [fromEnv] : [];
}

/** The named keys every listener of one server shares: the keys file, watched, and their usage. */
export interface NamedKeys {
  ring: KeyRing;
  usage: UsageBook;
}

/**
 * Reads the keys file (--keys-file, which must exist; else the default path, if it exists) and starts
 * watching it; a file that cannot be read stops start-up with the reason. Usage is written when the
 * process exits.
 */
export function openNamedKeys(values: ServerFlagValues, env: Record<string, string | undefined> = process.env): NamedKeys {
  const given = values["keys-file"];
  if (given !== undefined && given.trim() === "") throw new UsageError("--keys-file must name a file");
  const ring = new KeyRing(given ?? defaultKeysPath(env), { required: given !== undefined }).watch();
  const usage = new UsageBook({ path: usagePathFor(ring.path) });
  process.once("exit", () => usage.flushSync());
  return { ring, usage };
}

export function serverOptionsFromFlags(
  values: ServerFlagValues, profile: ProfileName, bindHost: string, env: Record<string, string | undefined> = process.env, named?: NamedKeys,
): ServerOptions {
  const corsOrigins = [
    ...(values["cors-origins"] ?? "").split(",").map((origin) => origin.trim()).filter(Boolean),
    ...(values["allowed-origins"] !== undefined ? allowedOriginsJson(values["allowed-origins"]) : []),
    ...(profiles[profile].ollamaEnvironment ? ollamaOrigins(env) : []),
  ];
  const maxBodyMib = wholeNumberOption(values["max-body-size"], "max-body-size", 1, 1024 * 1024);
  const idleTimeout = wholeNumberOption(values["idle-timeout"], "idle-timeout", 1, 255);
  const plainKeys = apiKeys(values, profile, env);
  return serverOptions({
    apiKeys: plainKeys, corsOrigins, publicMetrics: values["public-metrics"] ?? false, bindHost,
    ...(named ? { keyAccess: new KeyAccess({ plainKeys, ring: named.ring, usage: named.usage }) } : {}),
    ...(maxBodyMib !== undefined ? { bodyLimitBytes: maxBodyMib * MIB } : {}),
    ...(idleTimeout !== undefined ? { idleTimeoutSeconds: idleTimeout } : {}),
  });
}

/** What to warn about before serving with these options (the anchors' exposed-server incidents). */
export function exposureWarnings(options: ServerOptions): string[] {
  const warnings: string[] = [];
  if (!isLoopbackHost(options.bindHost) && !keysRequired(options)) {
    warnings.push(`bound to ${options.bindHost} without an API key: anyone who can reach this address can use the server (set --api-key or LLAMUX_API_KEY, or create keys with llamux keys create)`);
  }
  if (options.corsOrigins.includes("*")) {
    warnings.push("CORS allows any origin: any website open in a browser on this machine can use the server");
  }
  return warnings;
}
