// GET /v1/realtime on every profile: OpenAI's Realtime API over a WebSocket. The upgrade passes the
// listener's guards first; the key may come as "Authorization: Bearer KEY" or, from browsers, as the
// `openai-insecure-api-key.KEY` subprotocol (middleware/api-key.ts reads both). `?model=` names the
// session's model (a --realtime-config preset or a served model), `?intent=transcription` opens a
// transcription session, and `OpenAI-Beta: realtime=v1` (or the `openai-beta.realtime-v1` subprotocol)
// asks for the beta interface's events. Sessions per listener are bounded; the socket's frames go to a RealtimeSession.
import type { Server, ServerWebSocket } from "bun";
import type { Context } from "hono";
import { ApiError } from "../../api-error.ts";
import type { ServerDeps } from "../../deps.ts";
import { keyRequest } from "../../middleware/api-key.ts";
import type { SocketEndpoint } from "../../websocket-endpoints.ts";
import { asksForBeta } from "./beta-wire.ts";
import { RealtimeSession } from "./realtime-session.ts";

/** Realtime sessions one listener holds at once; more are refused with a 503 before the upgrade. */
export const MAX_REALTIME_SESSIONS = 16;

interface RealtimeSocketData {
  endpoint: SocketEndpoint<RealtimeSocketData>;
  start: (link: { send(text: string): void; close(code: number, reason: string): void }) => RealtimeSession;
  release: () => void;
  session?: RealtimeSession;
}

const realtimeEndpoint: SocketEndpoint<RealtimeSocketData> = {
  open(ws: ServerWebSocket<RealtimeSocketData>) {
    ws.data.session = ws.data.start({ send: (text) => void ws.send(text), close: (code, reason) => ws.close(code, reason) });
    ws.data.session.opened();
  },
  message(ws, message) {
    if (typeof message !== "string") {
      ws.data.session?.received("<binary frame>");
      return;
    }
    ws.data.session?.received(message);
  },
  close(ws) {
    ws.data.session?.ended();
    ws.data.release();
  },
};

/** The subprotocol the server answers with: "realtime" when the client offered it (browsers require one back). */
function chosenProtocol(offered: string | undefined): string | undefined {
  const protocols = (offered ?? "").split(",").map((p) => p.trim());
  return protocols.includes("realtime") ? "realtime" : undefined;
}

export function realtime(deps: ServerDeps) {
  let open = 0;
  return function realtimeHandler(c: Context) {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      throw new ApiError(426, "/v1/realtime is OpenAI's Realtime API over a WebSocket: connect with a WebSocket client (the openai package's OpenAIRealtimeWS)");
    }
    const intent = c.req.query("intent");
    if (intent !== undefined && intent !== "transcription") throw new ApiError(400, `intent "${intent}" is not supported: use transcription, or leave it out`, { param: "intent" });
    const model = c.req.query("model") || undefined;
    // The listener passes its server as the app's env (src/server/listener.ts).
    const server = (c.env as { server?: Server<RealtimeSocketData> } | undefined)?.server;
    if (typeof server?.upgrade !== "function") throw new ApiError(501, "WebSocket upgrades are not available on this listener");
    if (open >= MAX_REALTIME_SESSIONS) throw new ApiError(503, `Too many Realtime sessions (at most ${MAX_REALTIME_SESSIONS} on this listener): close one first`);
    const kind = intent === "transcription" ? "transcription" : "realtime";
    const key = keyRequest(c);
    const beta = asksForBeta(c.req.header("openai-beta"), c.req.header("sec-websocket-protocol"));
    let released = false;
    const data: RealtimeSocketData = {
      endpoint: realtimeEndpoint,
      start: (link) => new RealtimeSession(deps, deps.realtime, link, kind, model, key, beta),
      release: () => {
        if (!released) open--;
        released = true;
      },
    };
    const protocol = chosenProtocol(c.req.header("sec-websocket-protocol"));
    open++;
    if (!server.upgrade(c.req.raw, { data, ...(protocol ? { headers: { "Sec-WebSocket-Protocol": protocol } } : {}) })) {
      data.release();
      throw new ApiError(400, "WebSocket upgrade failed");
    }
    // Bun answers the upgrade itself; this response is not sent.
    return new Response(null);
  };
}
