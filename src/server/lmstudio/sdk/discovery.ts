// Where LM Studio's Node SDK finds a server when given no baseUrl: it asks
// http://127.0.0.1:{41343,52993,16141,39414,22931}/lmstudio-greeting in turn and connects to the first
// that answers {"lmstudio": true}; it never tries 1234. So profile c also listens on 127.0.0.1:41343
// (`--sdk-port` moves it, 0 turns it off), serving there only the greeting and the SDK sockets. A port
// in use (LM Studio itself, another llamux) is skipped with a log line, not a failure.
//
// It is a listener like the main one and gets the same guards: the listener's connection bounds
// (idle timeout, HTTP/1.0 without Host, no development error page), a loopback-only Host check (it is
// always bound to loopback, whatever --host says), security headers, and errors in the profile's shape.
// The SDK paths then go through the main app, with its own guards (CORS, body limit, request log).
import { Hono } from "hono";
import type { Server, WebSocketHandler } from "bun";
import { UsageError } from "../../../usage-error.ts";
import { logger } from "../../../log.ts";
import { ApiError, toApiError } from "../../api-error.ts";
import { listen, type ListenerEnv, type ListenerSetup } from "../../listener.ts";
import { hostCheck } from "../../middleware/host-check.ts";
import { securityHeaders } from "../../middleware/security-headers.ts";
import type { Profile } from "../../profiles/profile.ts";
import { SDK_SOCKET_PATHS } from "./websocket.ts";

const log = logger("lmstudio-sdk");

export const SDK_DISCOVERY_PORT = 41343;
/** Where the SDK looks: loopback only. */
export const SDK_DISCOVERY_HOST = "127.0.0.1";

const DISCOVERY_PATHS = new Set(["/lmstudio-greeting", ...SDK_SOCKET_PATHS]);

/** --sdk-port: the port, undefined for off (0). */
export function sdkDiscoveryPort(flag: string | undefined): number | undefined {
  if (flag === undefined) return SDK_DISCOVERY_PORT;
  const port = Number(flag);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--sdk-port must be a port number, or 0 for none, got "${flag}"`);
  return port === 0 ? undefined : port;
}

export interface SdkDiscoverySetup {
  /** The main app of profile c: the SDK paths are passed to it. */
  fetch: ListenerSetup["fetch"];
  profile: Profile;
  port: number;
  websocket: WebSocketHandler<never>;
  idleTimeoutSeconds: number;
}

/** The discovery listener's app: its own guards around the SDK paths of the main app, a 404 elsewhere. */
export function sdkDiscoveryApp(setup: Pick<SdkDiscoverySetup, "fetch" | "profile" | "port">): Hono<{ Bindings: ListenerEnv }> {
  const app = new Hono<{ Bindings: ListenerEnv }>();
  const renderError = (error: ApiError, c: { req: { path: string } }) => setup.profile.errorBody(error, c.req.path);
  app.use(securityHeaders());
  app.use(hostCheck({ bindHost: SDK_DISCOVERY_HOST, renderError }));
  app.all("*", (c) => {
    if (!DISCOVERY_PATHS.has(c.req.path)) throw new ApiError(404, `Only LM Studio's SDK protocol is served on port ${setup.port}`);
    return setup.fetch(c.req.raw, c.env);
  });
  app.onError((error, c) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) log.error(`${c.req.method} ${c.req.path}: ${apiError.message}`);
    return c.json(renderError(apiError, c), apiError.status as 400);
  });
  return app;
}

export function listenForSdkDiscovery(setup: SdkDiscoverySetup): Server<undefined> | undefined {
  const app = sdkDiscoveryApp(setup);
  try {
    const server = listen({ fetch: app.fetch, profile: setup.profile, hostname: SDK_DISCOVERY_HOST, port: setup.port, idleTimeoutSeconds: setup.idleTimeoutSeconds, websocket: setup.websocket });
    log.info(`LM Studio SDK discovery: listening on http://${SDK_DISCOVERY_HOST}:${setup.port} (LMStudioClient() without baseUrl finds llamux there)`);
    return server;
  } catch (error) {
    const inUse = (error as { code?: string }).code === "EADDRINUSE";
    log.info(`LM Studio SDK discovery: not listening on ${SDK_DISCOVERY_HOST}:${setup.port}: ${inUse ? "the port is in use" : (error as Error).message}; clients need baseUrl`);
    return undefined;
  }
}
