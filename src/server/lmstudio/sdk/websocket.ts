// Profile c's WebSocket endpoints for LM Studio's SDKs and `lms`: GET /llm, /embedding, /system (and the
// namespaces llamux does not serve) upgrade to a socket of LM Studio's protocol. The upgrade passes the
// listener's guards (host check, CORS, request log); the API key is checked in the protocol's own
// authentication frame instead of a header, since the SDK sends none:
//   without keys  every client is accepted, guests (random identities) included, as LM Studio;
//   with keys     a client is accepted when "<clientIdentifier>:<clientPasskey>" is a key (LM Studio's
//                 token form "sk-lm-<id>:<passkey>", split by the SDK into identifier and passkey), or when
//                 its passkey alone is (a plain key such as "secret", a named key's secret). Each call on
//                 the socket then runs under that key (socket-session.ts).
import type { Server, ServerWebSocket } from "bun";
import type { Handler } from "hono";
import { ApiError } from "../../api-error.ts";
import type { ServerDeps } from "../../deps.ts";
import type { KeyAccess } from "../../../keys/key-access.ts";
import type { LmStudioModelService } from "../model-service.ts";
import { SOCKET_LIMITS } from "./frames.ts";
import type { SocketEndpoint } from "../../websocket-endpoints.ts";
import { SDK_NAMESPACES, sdkNamespaces } from "./namespaces.ts";
import { type Authenticator, ClientRegistry, type Namespace, SdkSocketSession } from "./socket-session.ts";

interface SocketData {
  endpoint: SocketEndpoint<SocketData>;
  namespace: Namespace;
  authenticate: Authenticator;
  registry: ClientRegistry;
  session?: SdkSocketSession;
}

/** The paths that upgrade; they need no API key header (the handshake carries the key). */
export const SDK_SOCKET_PATHS = SDK_NAMESPACES.map((name) => `/${name}`);

function authenticator(access: KeyAccess | undefined): Authenticator {
  return (identifier, passkey) => {
    if (!access?.required) return { owner: "" };
    const invalid = `Invalid passkey for client "${identifier}": this server requires an API key`;
    // Both forms are compared with every plain key, so the time taken does not tell which form matched.
    const credentials = [`${identifier}:${passkey}`, passkey];
    return access.authenticate(credentials).then((grant) => {
      if (!grant) return invalid;
      const open = async () => {
        const current = await access.authenticate(credentials);
        if (!current) throw new ApiError(401, "The API key of this connection is no longer accepted: reconnect with a valid key");
        return access.open(current);
      };
      return { owner: grant.owner, open };
    }, (error: Error) => error.message);
  };
}

/** The SDK sockets' callbacks, one object for every listener (each socket carries its own state). */
export const sdkSocketEndpoint: SocketEndpoint<SocketData> = {
  open(ws: ServerWebSocket<SocketData>) {
    const { namespace, authenticate, registry } = ws.data;
    registry.total++;
    ws.data.session = new SdkSocketSession(namespace, { send: (text) => void ws.send(text), close: (code, reason) => ws.close(code, reason) }, authenticate, registry);
    ws.data.session.opened();
  },
  message(ws: ServerWebSocket<SocketData>, message: string | Buffer) {
    ws.data.session?.received(typeof message === "string" ? message : message.toString("utf8"));
  },
  close(ws: ServerWebSocket<SocketData>) {
    ws.data.registry.total--;
    ws.data.session?.ended();
  },
};

/** One route per namespace path, for profile c's route table. */
export function sdkSocketRoutes(deps: ServerDeps, models: LmStudioModelService, access: KeyAccess | undefined): Array<{ path: string; handler: Handler }> {
  const namespaces = sdkNamespaces(deps, models);
  const authenticate = authenticator(access);
  const registry = new ClientRegistry();
  return [...namespaces.values()].map((namespace) => ({
    path: `/${namespace.name}`,
    handler: (c) => {
      if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
        throw new ApiError(426, `/${namespace.name} is LM Studio's SDK WebSocket endpoint: connect with a WebSocket client (the LM Studio SDK or lms)`);
      }
      // The listener passes its server as the app's env (src/server/listener.ts).
      const server = (c.env as { server?: Server<SocketData> } | undefined)?.server;
      if (typeof server?.upgrade !== "function") throw new ApiError(501, "WebSocket upgrades are not available on this listener");
      if (registry.total >= SOCKET_LIMITS.maxSockets) throw new ApiError(503, `Too many SDK connections (at most ${SOCKET_LIMITS.maxSockets})`);
      if (!server.upgrade(c.req.raw, { data: { endpoint: sdkSocketEndpoint, namespace, authenticate, registry } })) throw new ApiError(400, "WebSocket upgrade failed");
      // Bun answers the upgrade itself; this response is not sent.
      return new Response(null);
    },
  }));
}
