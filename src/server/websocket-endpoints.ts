// One WebSocket handler per listener (Bun takes one per server) for every endpoint that upgrades: LM
// Studio's SDK protocol and OpenAI's Realtime API. Each upgraded socket carries the endpoint that serves
// it in its data, and the handler passes each callback on to it. The frame, idle and backpressure bounds
// are the listener's, shared by both.
import type { ServerWebSocket, WebSocketHandler } from "bun";

export interface SocketEndpoint<T> {
  open(ws: ServerWebSocket<T>): void;
  message(ws: ServerWebSocket<T>, message: string | Buffer): void;
  close(ws: ServerWebSocket<T>, code: number, reason: string): void;
}

export interface EndpointData {
  endpoint: SocketEndpoint<never>;
}

export const SOCKET_BOUNDS = {
  /** Largest frame accepted; a longer one closes the socket (1009). OpenAI allows 15 MiB of audio in one event. */
  maxFrameBytes: 16 * 1024 * 1024,
  /** Seconds without traffic (pings answered count) before a socket is closed. */
  idleTimeoutSeconds: 120,
  /** Bytes queued to a client that does not read before its socket is closed. */
  backpressureBytes: 32 * 1024 * 1024,
};

type Socket = ServerWebSocket<EndpointData>;
const endpointOf = (ws: Socket) => ws.data.endpoint as SocketEndpoint<EndpointData>;

export const endpointWebSocket: WebSocketHandler<EndpointData> = {
  open: (ws) => endpointOf(ws).open(ws),
  message: (ws, message) => endpointOf(ws).message(ws, message),
  close: (ws, code, reason) => endpointOf(ws).close(ws, code, reason),
  maxPayloadLength: SOCKET_BOUNDS.maxFrameBytes,
  idleTimeout: SOCKET_BOUNDS.idleTimeoutSeconds,
  backpressureLimit: SOCKET_BOUNDS.backpressureBytes,
  closeOnBackpressureLimit: true,
  sendPings: true,
  perMessageDeflate: false,
};
