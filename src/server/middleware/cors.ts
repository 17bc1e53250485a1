// CORS with an allow-list. Local pages and local app shells (Ollama's built-in OLLAMA_ORIGINS) are
// allowed; other websites only when listed. A request whose Origin is refused gets a 403 and no CORS
// headers, preflight or not: a "simple" cross-site POST (text/plain) is sent without a preflight, and
// answering it would let any website the user visits drive the server (Ollama refuses these too).
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../api-error.ts";
import { errorResponse, type RenderError } from "./error-response.ts";

export interface CorsOptions {
  /** Allowed origins besides the defaults: exact (`https://app.example`), with `*` wildcards, or `*` for any. */
  origins?: string[];
  renderError: RenderError;
}

/** Ollama's defaults, with [::1] added: loopback pages on any port and desktop-app schemes. */
export const DEFAULT_CORS_ORIGINS = [
  ...["localhost", "127.0.0.1", "[::1]", "0.0.0.0"].flatMap((host) =>
    ["http", "https"].flatMap((scheme) => [`${scheme}://${host}`, `${scheme}://${host}:*`])),
  "app://*", "file://*", "tauri://*", "vscode-webview://*", "vscode-file://*",
];

const ALLOWED_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
/** Chrome caps a cached preflight at two hours. */
const PREFLIGHT_MAX_AGE_SECONDS = "7200";

function originPattern(origin: string): RegExp {
  if (origin === "*") return /^.*$/;
  // An origin is scheme://host[:port] with nothing after; browsers send "null" for opaque origins.
  if (origin !== "null" && !/^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*$/i.test(origin)) {
    throw new RangeError(`Cannot use CORS origin "${origin}": expected scheme://host[:port] with no path, e.g. "https://app.example"`);
  }
  const escaped = origin.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*");
  return new RegExp(`^${escaped}$`, "i");
}

/** A page served by this very server (say the web UI reached through a LAN address) is not cross-origin. */
function isSameOrigin(origin: string, c: Context): boolean {
  const host = c.req.header("host");
  if (!host) return false;
  try {
    return new URL(origin).host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

export function cors(options: CorsOptions): MiddlewareHandler {
  const opts = { origins: [], ...options } satisfies Required<CorsOptions>;
  const patterns = [...DEFAULT_CORS_ORIGINS, ...opts.origins].map(originPattern);
  const allowed = (origin: string, c: Context) => patterns.some((pattern) => pattern.test(origin)) || isSameOrigin(origin, c);

  return async function cors(c, next) {
    const origin = c.req.header("origin");
    if (origin === undefined) return next();
    if (!allowed(origin, c)) {
      return errorResponse(c, opts.renderError, new ApiError(403, `Origin "${origin}" is not allowed: start the server with --cors-origins ${origin} to allow it`));
    }
    const requestMethod = c.req.header("access-control-request-method");
    if (c.req.method === "OPTIONS" && requestMethod !== undefined) {
      const headers = new Headers({
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": ALLOWED_METHODS,
        "Access-Control-Max-Age": PREFLIGHT_MAX_AGE_SECONDS,
        Vary: "Origin, Access-Control-Request-Headers",
      });
      // The origin is trusted, so whatever headers its client sends (Authorization, x-stainless-*) are fine.
      const requestHeaders = c.req.header("access-control-request-headers");
      if (requestHeaders) headers.set("Access-Control-Allow-Headers", requestHeaders);
      // Chrome's Private Network Access: a listed public website may call this local server.
      if (c.req.header("access-control-request-private-network") === "true") headers.set("Access-Control-Allow-Private-Network", "true");
      return new Response(null, { status: 204, headers });
    }
    await next();
    c.header("Access-Control-Allow-Origin", origin);
    c.header("Vary", "Origin", { append: true });
  };
}
