// Where LM Studio's Node SDK finds a server when given no baseUrl: it asks
// http://127.0.0.1:{41343,52993,16141,39414,22931}/lmstudio-greeting in turn and connects to the first
// that answers {"lmstudio": true}; it never tries 1234. So profile c also listens on 127.0.0.1:41343
// (`--sdk-port` moves it, 0 turns it off), serving there only the greeting and the SDK sockets. A port
// in use (LM Studio itself, another llamux) is skipped with a log line, not a failure.
import type { Server, WebSocketHandler } from "bun";
import { UsageError } from "../../../usage-error.ts";
import { logger } from "../../../log.ts";
import { SDK_SOCKET_PATHS } from "./websocket.ts";

const log = logger("lmstudio-sdk");

export const SDK_DISCOVERY_PORT = 41343;

const DISCOVERY_PATHS = new Set(["/lmstudio-greeting", ...SDK_SOCKET_PATHS]);

/** --sdk-port: the port, undefined for off (0). */
export function sdkDiscoveryPort(flag: string | undefined): number | undefined {
  if (flag === undefined) return SDK_DISCOVERY_PORT;
  const port = Number(flag);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--sdk-port must be a port number, or 0 for none, got "${flag}"`);
  return port === 0 ? undefined : port;
}

type AppFetch = (request: Request, env: { server: Server<undefined> }) => Response | Promise<Response>;

export function listenForSdkDiscovery(fetch: AppFetch, port: number, websocket: WebSocketHandler<never>): void {
  const onlySdk = (request: Request, server: Server<undefined>) => {
    const path = new URL(request.url).pathname;
    if (DISCOVERY_PATHS.has(path)) return fetch(request, { server });
    return Response.json({ error: `Only LM Studio's SDK protocol is served on port ${port}` }, { status: 404 });
  };
  try {
    Bun.serve({ hostname: "127.0.0.1", port, fetch: onlySdk, websocket, idleTimeout: 0 } as Parameters<typeof Bun.serve>[0]);
    log.info(`LM Studio SDK discovery: listening on http://127.0.0.1:${port} (LMStudioClient() without baseUrl finds llamux there)`);
  } catch (error) {
    const inUse = (error as { code?: string }).code === "EADDRINUSE";
    log.info(`LM Studio SDK discovery: not listening on 127.0.0.1:${port}: ${inUse ? "the port is in use" : (error as Error).message}; clients need baseUrl`);
  }
}
