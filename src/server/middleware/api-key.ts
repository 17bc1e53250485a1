// Optional API key. With keys configured, every path but a few probes needs one, sent as
// `Authorization: Bearer KEY` (OpenAI clients), a bare `Authorization: KEY` or `X-Api-Key: KEY`
// (Anthropic-style clients; llama-server accepts all three), or on a WebSocket upgrade the subprotocol
// `openai-insecure-api-key.KEY` (OpenAI's Realtime clients in browsers). Without keys the factory is not used at
// all, so any placeholder key a client sends passes, as the three anchors do. The key that passed is
// named on the context (`keyOwner(c)`), so what a request stores (a Responses conversation, an LM Studio
// chat thread) belongs to its key and another key cannot read it.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../api-error.ts";
import { errorResponse, type RenderError } from "./error-response.ts";

export interface ApiKeyOptions {
  /** Accepted keys (vLLM and llama-server take several). */
  keys: string[];
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
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/**
 * Who owns what a request stores: the key that authenticated it, or "" on a server without keys (and
 * on the public paths), where every client is the same anonymous owner.
 */
export function keyOwner(c: Context): string {
  return c.get("apiKeyOwner") ?? "";
}

function checkKey(key: string): void {
  if (key.length === 0) throw new RangeError("Cannot use an empty API key");
  // HTTP trims header values, so such a key could never be sent.
  if (key.trim() !== key || /[\x00-\x1f\x7f]/.test(key)) {
    throw new RangeError("Cannot use an API key with leading or trailing spaces or control characters");
  }
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

/**
 * A constant-time lookup of a presented credential among the keys: the owner name of the key it
 * matches (a digest prefix, stable across restarts and key order), or undefined.
 */
export function keyOwnerFinder(keys: string[]): (candidate: string) => string | undefined {
  if (keys.length === 0) throw new RangeError("Cannot require an API key: no keys given");
  keys.forEach(checkKey);
  // Digests have equal length whatever the key's length, which timingSafeEqual needs.
  const keyDigests = keys.map(sha256);
  const owners = keyDigests.map((digest) => `key-${digest.subarray(0, 8).toString("hex")}`);
  return (candidate: string): string | undefined => {
    const digest = sha256(candidate);
    let match: string | undefined;
    // No early exit: the time taken does not tell which key (or whether any) matched.
    keyDigests.forEach((keyDigest, index) => {
      if (timingSafeEqual(keyDigest, digest)) match ??= owners[index];
    });
    return match;
  };
}

/** A constant-time test of a presented credential against the keys (shared with LM Studio's SDK socket handshake). */
export function keyMatcher(keys: string[]): (candidate: string) => boolean {
  const find = keyOwnerFinder(keys);
  return (candidate: string): boolean => find(candidate) !== undefined;
}

export function apiKey(options: ApiKeyOptions): MiddlewareHandler {
  const opts = { publicPaths: PUBLIC_PATHS, ...options } satisfies Required<ApiKeyOptions>;
  const ownerOf = keyOwnerFinder(opts.keys);
  const publicPaths = new Set(opts.publicPaths);

  return async function apiKey(c, next) {
    // Preflights carry no credentials by design (vLLM exempts OPTIONS too).
    if (c.req.method === "OPTIONS" || publicPaths.has(c.req.path)) return next();
    const presented = presentedKeys(c);
    // Every credential is looked up (no early exit), the first that matches names the owner.
    const owners = presented.map(ownerOf);
    const owner = owners.find((found) => found !== undefined);
    if (owner !== undefined) {
      c.set("apiKeyOwner", owner);
      return next();
    }
    const message = presented.length === 0
      ? "Missing API key: send it as \"Authorization: Bearer <key>\" or \"X-Api-Key: <key>\""
      : "Invalid API Key";
    return errorResponse(c, opts.renderError, new ApiError(401, message), { "WWW-Authenticate": "Bearer" });
  };
}
