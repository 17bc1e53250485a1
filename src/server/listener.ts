// Puts one listener's app on a socket with Bun.serve, bounded against clients that hold connections:
// a connection that sends nothing for `idleTimeoutSeconds` (headers, or a body that stops arriving, or
// an idle keep-alive) is closed; once a request's body has arrived in full the timeout is off until its
// answer ends, so a long generation (a non-streamed one sends nothing for minutes, a streamed one may
// pause between tokens) is never cut. A request whose URL cannot be formed (HTTP/1.0 without a Host
// header) gets a 400 in the profile's shape instead of Bun's 500, and an error that escapes the app is a
// 500 in the profile's shape, never Bun's development error page (which shows paths and source lines).
// Every socket the server opens for HTTP goes through `listen`.
import type { Server, WebSocketHandler } from "bun";
import { ApiError } from "./api-error.ts";
import type { Profile } from "./profiles/profile.ts";
import { DEFAULT_IDLE_TIMEOUT_SECONDS } from "./server-options.ts";
import { logger } from "../log.ts";

const log = logger("http");


/** What the app gets besides the request (Hono's `c.env`): the server, e.g. to upgrade a WebSocket. */
export interface ListenerEnv {
  server: Server<undefined>;
}

export interface ListenerSetup {
  /** A request without a body (a WebSocket upgrade too) is passed as Bun gave it; one with a body is wrapped. */
  fetch: (request: Request, env: ListenerEnv) => Response | Promise<Response>;
  profile: Profile;
  hostname: string;
  port: number;
  idleTimeoutSeconds?: number;
  /** Handlers of the WebSocket connections the app upgrades (LM Studio's SDK protocol, the Realtime API). */
  websocket?: WebSocketHandler<never>;
  /** Serve HTTPS (and wss:) with this certificate and key, PEM text (vLLM's --ssl-certfile and --ssl-keyfile). */
  tls?: { cert: string; key: string };
}

/** The request with its body passed through a stream that calls `done` when the last byte has been read. */
function watchBody(request: Request, done: () => void): Request {
  if (!request.body) {
    done();
    return request;
  }
  const body = request.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: done }));
  return new Request(request.url, { method: request.method, headers: request.headers, body, signal: request.signal, duplex: "half" } as RequestInit);
}

/** Streamed answers (SSE, NDJSON, speech audio) may pause between tokens for longer than the idle timeout. */
const STREAM_TYPES = ["text/event-stream", "application/x-ndjson", "audio/"];

/** The same bytes, with `ended` called once the stream has delivered its last one. */
function watchEnd(body: ReadableStream<Uint8Array>, ended: () => void): ReadableStream<Uint8Array> {
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: ended }));
}

function badRequestResponse(profile: Profile, request: Request, message: string): Response {
  const path = request.url.startsWith("/") ? request.url.replace(/[?#].*$/, "") : "/";
  return Response.json(profile.errorBody(new ApiError(400, message), path), { status: 400 });
}

/** A fetch handler for Bun.serve that applies the connection bounds around `setup.fetch`. */
export function boundedFetch(setup: Pick<ListenerSetup, "fetch" | "profile" | "idleTimeoutSeconds">) {
  const idle = setup.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
  return async function boundedFetch(raw: Request, server: Server<undefined>): Promise<Response> {
    if (!URL.canParse(raw.url)) return badRequestResponse(setup.profile, raw, "Cannot serve a request without a Host header: send one (required since HTTP/1.1)");
    const request = watchBody(raw, () => setIdleTimeout(server, raw, 0));
    const response = await setup.fetch(request, { server });
    // After server.upgrade (a WebSocket) there is no response to send.
    if (!(response instanceof Response)) return response;
    const contentType = response.headers.get("content-type") ?? "";
    if (response.body && STREAM_TYPES.some((type) => contentType.startsWith(type))) {
      return new Response(watchEnd(response.body, () => setIdleTimeout(server, raw, idle)), response);
    }
    // An answer that is not streamed goes out now: the connection is idle again after it.
    setIdleTimeout(server, raw, idle);
    return response;
  };
}

/** Bun's per-connection idle timeout (0: none) for the connection `request` came on. */
function setIdleTimeout(server: Server<undefined>, request: Request, seconds: number): void {
  try {
    server.timeout(request, seconds);
  } catch {
    // the connection is already gone
  }
}

export function listen(setup: ListenerSetup): Server<undefined> {
  const idle = setup.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
  if (!Number.isInteger(idle) || idle < 1 || idle > 255) throw new RangeError(`Cannot use an idle timeout of ${idle} s: expected 1 to 255`);
  // No Bun limit on bodies: the body-limit middleware is the one limit, and answers in the profile's shape.
  return Bun.serve({
    hostname: setup.hostname,
    port: setup.port,
    idleTimeout: idle,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    fetch: boundedFetch(setup),
    error(error: Error) {
      log.error(`a request failed outside the app: ${error.message}`);
      return Response.json(setup.profile.errorBody(new ApiError(500, "Internal server error"), "/"), { status: 500 });
    },
    ...(setup.websocket ? { websocket: setup.websocket } : {}),
    ...(setup.tls ? { tls: setup.tls } : {}),
  } as Parameters<typeof Bun.serve>[0]);
}
