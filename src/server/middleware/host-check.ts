// DNS-rebinding guard. A website can point its own name at 127.0.0.1 and then call a loopback server
// "same-origin", past CORS; the Host header still names the website, so while bound to loopback only
// loopback names pass. Bound to another address the server is reachable under names we cannot know,
// so the check is off there (as Ollama's allowedHostsMiddleware does); the API key guards that case.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../api-error.ts";
import { isLoopbackHost } from "../server-options.ts";
import { errorResponse, type RenderError } from "./error-response.ts";

export interface HostCheckOptions {
  /** The address the listener binds. */
  bindHost: string;
  renderError: RenderError;
}

/** The host name of a Host header value (`localhost:8000`, `[::1]:8000`), or undefined if it is not one. */
function hostName(hostHeader: string): string | undefined {
  // Only host[:port] characters, so userinfo tricks like "evil.example@localhost" cannot pass.
  if (!/^[a-z0-9.\-[\]:]+$/i.test(hostHeader)) return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

export function hostCheck(options: HostCheckOptions): MiddlewareHandler {
  const opts = { ...options } satisfies Required<HostCheckOptions>;
  if (!opts.bindHost) throw new RangeError("Cannot check Host headers: no bind address given");
  const enabled = isLoopbackHost(opts.bindHost);

  return async function hostCheck(c, next) {
    if (!enabled) return next();
    // Bun fills the URL from the Host header; in-process requests may have only the URL.
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    const name = hostName(host);
    if (name !== undefined && isLoopbackHost(name)) return next();
    const message = `Host "${host}" is not allowed: the server is bound to ${opts.bindHost} and answers only requests `
      + "addressed to localhost, 127.0.0.1 or [::1] (a guard against DNS rebinding; a reverse proxy must send Host: localhost)";
    return errorResponse(c, opts.renderError, new ApiError(403, message));
  };
}
