// How one listener guards itself: API keys, browser origins, the bind address (for the DNS-rebinding
// guard and the exposed-server warning), the body size limit. `llamux serve` builds it from flags and env.
import { KeyAccess } from "../keys/key-access.ts";

export interface ServerOptions {
  /** Plain keys a client may send (every scope, no limits). None here nor in `keyAccess`: no key is required. */
  apiKeys: string[];
  /**
   * Plain and named keys together, with the named keys' usage; shared by every listener of a server.
   * Unset: built from `apiKeys` (withKeyAccess).
   */
  keyAccess?: KeyAccess;
  /** Browser origins allowed besides the built-in local ones; `*` alone allows any, inside a pattern any run. */
  corsOrigins: string[];
  /** Serve /metrics without a key (Prometheus scrapers often cannot send one). */
  publicMetrics: boolean;
  /** The address the listener binds; a loopback one turns the Host-header check on. */
  bindHost: string;
  /** Largest request body accepted, in bytes (blob uploads excepted: they stream to disk). */
  bodyLimitBytes: number;
  /** Seconds a connection may send nothing while the server waits for it (headers, body, keep-alive). */
  idleTimeoutSeconds: number;
}

/** How long a connection may send nothing while the server waits on it (Bun's limit is 255). */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 30;

/**
 * A JSON request is held whole while it is parsed (about twice its size in memory), so the limit is
 * what a chat needs: images arrive base64-encoded (4/3 of their size), and 32 MiB carries one image
 * as large as an image URL may fetch (20 MB) or several full-size photos, as Anthropic's API allows
 * 32 MB. Model files go through /api/blobs, which streams to disk and is not limited.
 */
export const DEFAULT_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

export const defaultServerOptions: ServerOptions = {
  apiKeys: [],
  corsOrigins: [],
  publicMetrics: false,
  bindHost: "127.0.0.1",
  bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
  idleTimeoutSeconds: DEFAULT_IDLE_TIMEOUT_SECONDS,
};

export function serverOptions(options: Partial<ServerOptions> = {}): ServerOptions {
  return { ...defaultServerOptions, ...options };
}

/** The options with `keyAccess` set whenever the server has keys of either kind. */
export function withKeyAccess(options: ServerOptions): ServerOptions {
  if (options.keyAccess || options.apiKeys.length === 0) return options;
  return { ...options, keyAccess: new KeyAccess({ plainKeys: options.apiKeys }) };
}

/** Whether requests need a key now (a keys file read after start turns this on). */
export function keysRequired(options: ServerOptions): boolean {
  return options.apiKeys.length > 0 || options.keyAccess?.required === true;
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 and ::1: names and addresses that can only reach this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "::1" || name === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
