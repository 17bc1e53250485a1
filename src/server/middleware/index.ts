// Installs the guards of one listener, before its routes. Order matters:
//   request log   outermost, so refusals are logged too and latency covers everything;
//   security headers  on every answer, refusals included (no framing, no sniffing);
//   host check    a rebinding attacker's request stops before anything else looks at it;
//   CORS          answers preflights (which carry no key) and adds its headers to every later
//                 answer, 401s included, so a browser client can read why it was refused;
//   API key       before the body is read: an unauthenticated upload is never buffered;
//   key usage     runs the request under its key and closes the key's account when the answer is over
//                 (each route's own guard, from its route table, admits it: scope and limits);
//   body limit    just before validation and the routes;
//   engine leases innermost: the engines a route is handed stay loaded until its answer has been sent.
import type { Hono } from "hono";
import type { Profile } from "../profiles/profile.ts";
import type { ApiError } from "../api-error.ts";
import { type ServerOptions, withKeyAccess } from "../server-options.ts";
import { apiKey, PUBLIC_PATHS } from "./api-key.ts";
import { keyUsage } from "./key-usage.ts";
import { bodyLimit } from "./body-limit.ts";
import { cors } from "./cors.ts";
import { engineLeases } from "./engine-leases.ts";
import type { RenderError } from "./error-response.ts";
import { hostCheck } from "./host-check.ts";
import { securityHeaders } from "./security-headers.ts";
import { requestLog, type RequestLogOptions } from "./request-log.ts";

/** The profile's error shape for the request's path (its 401 included: vLLM's is a bare {"error": "Unauthorized"}). */
export function middlewareErrorBody(profile: Profile): RenderError {
  return (error: ApiError, c) => profile.errorBody(error, c.req.path);
}

export interface MiddlewareSetup {
  profile: Profile;
  options: ServerOptions;
  /** Replaces the request log's writer (tests). */
  writeLog?: RequestLogOptions["write"];
  recordRequest?: RequestLogOptions["record"];
  /** Paths served without a key besides the probes (the web UI's page). */
  publicPaths?: string[];
}

export function installMiddleware(app: Hono, setup: MiddlewareSetup): void {
  const options = withKeyAccess(setup.options);
  const renderError = middlewareErrorBody(setup.profile);
  app.use(requestLog({ ...(setup.writeLog ? { write: setup.writeLog } : {}), ...(setup.recordRequest ? { record: setup.recordRequest } : {}) }));
  app.use(securityHeaders());
  app.use(hostCheck({ bindHost: options.bindHost, renderError }));
  app.use(cors({ origins: options.corsOrigins, renderError }));
  // A keys file may be read after start: the guard is there whenever one is watched, and asks for keys once they exist.
  if (options.keyAccess) {
    const publicPaths = [...PUBLIC_PATHS, ...(setup.publicPaths ?? []), ...(options.publicMetrics ? ["/metrics"] : [])];
    app.use(apiKey({ access: options.keyAccess, publicPaths, renderError }));
    app.use(keyUsage());
  }
  app.use(bodyLimit({ maxBytes: options.bodyLimitBytes, renderError }));
  app.use(engineLeases());
}
