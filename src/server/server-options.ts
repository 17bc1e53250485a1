// How one listener guards itself: API keys, browser origins, the bind address (for the DNS-rebinding
// guard and the exposed-server warning), the body size limit. `llamux serve` builds it from flags and env.

export interface ServerOptions {
  /** Keys a client may send. Empty: no key is required, and any placeholder key a client sends is accepted. */
  apiKeys: string[];
  /** Browser origins allowed besides the built-in local ones; `*` alone allows any, inside a pattern any run. */
  corsOrigins: string[];
  /** Serve /metrics without a key (Prometheus scrapers often cannot send one). */
  publicMetrics: boolean;
  /** The address the listener binds; a loopback one turns the Host-header check on. */
  bindHost: string;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
}

/** Images arrive base64-encoded inside JSON bodies, so the limit is generous. */
export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024 * 1024;

export const defaultServerOptions: ServerOptions = {
  apiKeys: [],
  corsOrigins: [],
  publicMetrics: false,
  bindHost: "127.0.0.1",
  bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
};

export function serverOptions(options: Partial<ServerOptions> = {}): ServerOptions {
  return { ...defaultServerOptions, ...options };
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 and ::1: names and addresses that can only reach this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "::1" || name === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
