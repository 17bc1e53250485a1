// API keys. With keys (plain --api-key ones, or the named keys of a keys file), every path but a few
// probes needs one, sent as `Authorization: Bearer KEY` (OpenAI clients), a bare `Authorization: KEY` or
// `X-Api-Key: KEY` (Anthropic-style clients; llama-server accepts all three), or on a WebSocket upgrade the
// subprotocol `openai-insecure-api-key.KEY` (OpenAI's Realtime clients in browsers). Without keys every
// request passes, and any placeholder key a client sends with it, as the three anchors do. The key that passed is
// named on the context (`keyOwner(c)`), so what a request stores (a Responses conversation, an LM Studio
// chat thread, a download job) belongs to its key and another key cannot read it; and its grant opens a
// KeyRequest (`keyRequest(c)`), which the route's guard admits and which counts the request's usage.
import type { Context, MiddlewareHandler } from "hono";
import { ApiError, toApiError } from "../api-error.ts";
import type { KeyAccess } from "../../keys/key-access.ts";
import type { KeyRequest } from "../../keys/key-request.ts";
import { errorResponse, type RenderError } from "./error-response.ts";

export interface ApiKeyOptions {
  access: KeyAccess;
  /** Paths served without a key: liveness probes and version checks that clients call before they have one. */
  publicPaths?: string[];
  renderError: RenderError;
}

/** Probes and greetings of the three anchors; `/metrics` joins them only with --public-metrics. */
export const PUBLIC_PATHS = ["/", "/health", "/ping", "/version", "/api/version", "/lmstudio-greeting"];

declare module "hono" {
  interface ContextVariableMap {
    /** Names the API key that authenticated the request (never the key itself); unset without keys. */
    apiKeyOwner: string;
    /** The work done under the request's key; unset without keys. */
    keyRequest: KeyRequest;
  }
}

/**
 * Who owns what a request stores: the key that authenticated it (a named key's name, a plain key's digest
 * prefix), or "" on a server without keys (and on the public paths), where every client is the same owner.
 */
export function keyOwner(c: Context): string {
  return c.get("apiKeyOwner") ?? "";
}

/** The request's key, when the server has keys. */
export function keyRequest(c: Context): KeyRequest | undefined {
  return c.get("keyRequest");
}

/** Every credential the request carries; a client may send a placeholder in one header and the key in the other. */
function presentedKeys(c: Context): string[] {
  const found: string[] = [];
  const authorization = c.req.header("authorization")?.trim();
  if (authorization) found.push(authorization.replace(/^bearer\s+/i, ""));
  const apiKey = c.req.header("x-api-key")?.trim();
  if (apiKey) found.push(apiKey);
  // Browsers cannot set headers on a WebSocket: OpenAI's Realtime clients send the key as a subprotocol.
  if (c.req.header("upgrade")?.toLowerCase() === "websocket") {
    for (const protocol of (c.req.header("sec-websocket-protocol") ?? "").split(",")) {
      const key = protocol.trim().match(/^openai-insecure-api-key\.(.+)$/)?.[1];
      if (key) found.push(key);
    }
  }
  return found;
}

export function apiKey(options: ApiKeyOptions): MiddlewareHandler {
  const opts = { publicPaths: PUBLIC_PATHS, ...options } satisfies Required<ApiKeyOptions>;
  const { access } = opts;
  const publicPaths = new Set(opts.publicPaths);

  return async function apiKey(c, next) {
    // Preflights carry no credentials by design (vLLM exempts OPTIONS too).
    if (!access.required || c.req.method === "OPTIONS" || publicPaths.has(c.req.path)) return next();
    const presented = presentedKeys(c);
    let grant;
    try {
      grant = await access.authenticate(presented);
    } catch (error) {
      return errorResponse(c, opts.renderError, toApiError(error));
    }
    if (grant !== undefined) {
      c.set("apiKeyOwner", grant.owner);
      c.set("keyRequest", access.open(grant));
      return next();
    }
    const message = presented.length === 0
      ? "Missing API key: send it as \"Authorization: Bearer <key>\" or \"X-Api-Key: <key>\""
      : "Invalid API Key";
    return errorResponse(c, opts.renderError, new ApiError(401, message), { "WWW-Authenticate": "Bearer" });
  };
}
