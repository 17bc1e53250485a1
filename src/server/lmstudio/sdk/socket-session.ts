// One WebSocket of LM Studio's SDK protocol, whatever carries it: the authentication frame first, then
// RPCs (one answer each) and channels (packets both ways until the server closes them or the client
// cancels). A malformed frame ends only the call it names, with rpcError/channelError, or earns a
// communicationWarning when it names none; the socket and the server go on. On a server with keys the
// socket's key comes in the authentication frame, and each call runs under it: admitted by the scope its
// namespace's table names (and the key's limits), counted in its usage, owned by it.
import { ApiError } from "../../api-error.ts";
import type { KeyRequest } from "../../../keys/key-request.ts";
import type { RouteNeed } from "../../../keys/key-scopes.ts";
import { EngineLeases } from "../../../engine/engine-leases.ts";
import { logger } from "../../../log.ts";
import { authFrameSchema, clientFrameSchema, describeIssue, serializeError, SOCKET_LIMITS, type ClientFrame, type ServerFrame } from "./frames.ts";

const log = logger("lmstudio-sdk");

export interface CallContext {
  /** Aborted when the client cancels the call, closes the socket, or the socket dies. */
  signal: AbortSignal;
  clientIdentifier: string;
}

export interface ChannelContext extends CallContext {
  send(packet: unknown): void;
  /** Packets the client sends on the channel (`cancel`, …). */
  onPacket(listener: (packet: unknown) => void): void;
}

export type RpcEndpoint = (parameter: unknown, call: CallContext) => Promise<unknown>;
/** Resolves when the channel is done (the server closes it), rejects to close it with an error. */
export type ChannelEndpoint = (creationParameter: unknown, channel: ChannelContext) => Promise<void>;

export interface Namespace {
  name: string;
  rpc: Record<string, RpcEndpoint>;
  channels: Record<string, ChannelEndpoint>;
  /** What each endpoint (RPC or channel) needs of the socket's key; an endpoint not named needs the admin scope. */
  needs?: Record<string, RouteNeed>;
}

export interface SocketIo {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** An accepted client: the owner of its key ("" without keys), and the work its calls run as (with keys). */
export interface SocketClient {
  owner: string;
  /** One call's work under the socket's key, checked again (a key revoked since the handshake is refused). */
  open?(): Promise<KeyRequest>;
}

/** Says whether a client's identity and passkey are accepted: the client, or why not. */
export type Authenticator = (clientIdentifier: string, clientPasskey: string) => SocketClient | string | Promise<SocketClient | string>;

/** Counts sockets per client identity (of each key), so one client cannot hold the server's sockets. */
export class ClientRegistry {
  private readonly sockets = new Map<string, number>();
  total = 0;

  claim(identity: string): boolean {
    const held = this.sockets.get(identity) ?? 0;
    if (held >= SOCKET_LIMITS.maxSocketsPerClient) return false;
    this.sockets.set(identity, held + 1);
    return true;
  }

  release(identity: string): void {
    const held = (this.sockets.get(identity) ?? 1) - 1;
    if (held <= 0) this.sockets.delete(identity);
    else this.sockets.set(identity, held);
  }
}

interface OpenChannel {
  controller: AbortController;
  listeners: Array<(packet: unknown) => void>;
}

/** Close codes: policy violation (bad or refused authentication), try again later (too many sockets). */
const POLICY_VIOLATION = 1008;
const TRY_AGAIN_LATER = 1013;

/** Frames a client may send while its key is checked; more is a protocol breach. */
const MAX_FRAMES_WHILE_AUTHENTICATING = 64;

export class SdkSocketSession {
  /** The registry's name for the client: its key's owner and the identifier it sent. */
  private identity: string | undefined;
  private clientIdentifier = "";
  private client: SocketClient | undefined;
  /** Set while the key is checked: frames that arrive then wait here. */
  private pending: string[] | undefined;
  private authTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly rpcs = new Map<number, AbortController>();
  private readonly channels = new Map<number, OpenChannel>();
  private closed = false;

  constructor(
    private readonly namespace: Namespace,
    private readonly io: SocketIo,
    private readonly authenticate: Authenticator,
    private readonly registry: ClientRegistry,
  ) {}

  opened(): void {
    this.authTimer = setTimeout(() => this.refuse("Authentication timed out: send {authVersion: 1, clientIdentifier, clientPasskey} first"), SOCKET_LIMITS.authTimeoutMs);
  }

  received(text: string): void {
    if (this.closed) return;
    if (this.pending) {
      if (this.pending.length >= MAX_FRAMES_WHILE_AUTHENTICATING) return this.refuse(`More than ${MAX_FRAMES_WHILE_AUTHENTICATING} frames before authentication ended`);
      this.pending.push(text);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (this.identity === undefined) return this.refuse("Failed to parse authentication packet: not JSON");
      return this.warn(`Cannot parse frame as JSON: ${JSON.stringify(text.slice(0, 40))}`);
    }
    if (this.identity === undefined) return this.authenticateWith(value);
    const frame = clientFrameSchema.safeParse(value);
    if (!frame.success) return this.malformed(value, describeIssue(frame.error, "frame"));
    this.dispatch(frame.data);
  }

  /** The socket is gone: every call it carried is cancelled. */
  ended(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.authTimer);
    this.pending = undefined;
    if (this.identity !== undefined) this.registry.release(this.identity);
    for (const controller of this.rpcs.values()) controller.abort(new ApiError(499, "The client closed the connection"));
    for (const channel of this.channels.values()) channel.controller.abort(new ApiError(499, "The client closed the connection"));
    this.rpcs.clear();
    this.channels.clear();
  }

  private authenticateWith(value: unknown): void {
    const frame = authFrameSchema.safeParse(value);
    if (!frame.success) return this.refuse(describeIssue(frame.error, "authentication packet"));
    const { clientIdentifier, clientPasskey } = frame.data;
    const outcome = this.authenticate(clientIdentifier, clientPasskey);
    if (!(outcome instanceof Promise)) return this.authenticated(clientIdentifier, outcome);
    // A named key's first use hashes its secret off the thread: later frames wait until that is done.
    this.pending = [];
    outcome.then((client) => {
      const waiting = this.pending ?? [];
      this.pending = undefined;
      if (this.closed) return;
      this.authenticated(clientIdentifier, client);
      for (const text of waiting) this.received(text);
    }, (error) => {
      this.pending = undefined;
      this.refuse((error as Error).message);
    });
  }

  private authenticated(clientIdentifier: string, client: SocketClient | string): void {
    if (typeof client === "string") return this.refuse(client);
    // Identities are counted per key: another key's client of the same name takes none of its sockets.
    const identity = `${client.owner}\u0000${clientIdentifier}`;
    if (!this.registry.claim(identity)) {
      this.write({ success: false, error: `Too many connections for client "${clientIdentifier}" (at most ${SOCKET_LIMITS.maxSocketsPerClient})` });
      return this.close(TRY_AGAIN_LATER, "too many connections");
    }
    clearTimeout(this.authTimer);
    this.identity = identity;
    this.clientIdentifier = clientIdentifier;
    this.client = client;
    this.write({ success: true });
  }

  /** Runs one call under the socket's key: admitted by its endpoint's need, its usage counted when it ends. */
  private underKey<T>(endpoint: string, call: () => Promise<T>): Promise<T> {
    // Without keys the call starts at once, as it always has.
    if (!this.client?.open) return call();
    return this.client.open().then(async (work) => {
      work.admit(this.namespace.needs?.[endpoint] ?? "admin", `call ${endpoint} on /${this.namespace.name}`);
      try {
        return await work.run(call);
      } finally {
        work.finish(undefined);
      }
    });
  }

  private refuse(reason: string): void {
    log.info(`/${this.namespace.name}: refused a client: ${reason}`);
    this.write({ success: false, error: reason });
    this.close(POLICY_VIOLATION, "authentication failed");
  }

  private close(code: number, reason: string): void {
    this.io.close(code, reason);
    this.ended();
  }

  /** A frame that does not fit the protocol: the call it names (if any) ends with an error. */
  private malformed(value: unknown, reason: string): void {
    const frame = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
    const error = serializeError(new ApiError(400, reason));
    if (frame.type === "rpcCall" && Number.isSafeInteger(frame.callId)) {
      this.rpcs.get(frame.callId as number)?.abort();
      this.rpcs.delete(frame.callId as number);
      return this.send({ type: "rpcError", callId: frame.callId as number, error });
    }
    if ((frame.type === "channelCreate" || frame.type === "channelSend") && Number.isSafeInteger(frame.channelId)) {
      return this.failChannel(frame.channelId as number, new ApiError(400, reason));
    }
    this.warn(reason);
  }

  private warn(warning: string): void {
    this.send({ type: "communicationWarning", warning });
  }

  private dispatch(frame: ClientFrame): void {
    switch (frame.type) {
      case "keepAlive":
        return this.send({ type: "keepAliveAck" });
      case "communicationWarning":
        return log.debug(`/${this.namespace.name}: client warning: ${frame.warning.slice(0, 500)}`);
      case "rpcCall":
        return this.startRpc(frame.endpoint, frame.callId, frame.parameter);
      case "channelCreate":
        return this.startChannel(frame.endpoint, frame.channelId, frame.creationParameter);
      case "channelSend": {
        const channel = this.channels.get(frame.channelId);
        if (!channel) return this.warn(`channelSend for unknown channel ${frame.channelId}`);
        if (frame.ackId !== undefined) this.send({ type: "channelAck", channelId: frame.channelId, ackId: frame.ackId });
        for (const listener of channel.listeners) listener(frame.message);
        return;
      }
      case "channelAck":
        return; // the server never asks for acknowledgements
      case "signalSubscribe":
      case "writableSignalSubscribe":
        return this.send({
          type: frame.type === "signalSubscribe" ? "signalError" : "writableSignalError",
          subscribeId: frame.subscribeId,
          error: serializeError(new ApiError(501, `Signal "${frame.endpoint}" is not served by llamux on /${this.namespace.name}`)),
        });
      case "signalUnsubscribe":
      case "writableSignalUnsubscribe":
      case "writableSignalUpdate":
        return;
    }
  }

  private openCalls(): number {
    return this.rpcs.size + this.channels.size;
  }

  private startRpc(endpoint: string, callId: number, parameter: unknown): void {
    const fail = (error: unknown) => this.send({ type: "rpcError", callId, error: serializeError(error) });
    // Checked first, whatever the new call names: the client now expects its newer call under this id,
    // so the first call's answer would be read as the newer one's. Both end, with one rpcError, and the
    // first call's own answer is dropped.
    const inFlight = this.rpcs.get(callId);
    if (inFlight) {
      this.rpcs.delete(callId);
      const error = new ApiError(400, `RPC call id ${callId} is already in use on this connection: both calls are cancelled`);
      inFlight.abort(error);
      return fail(error);
    }
    const handler = Object.hasOwn(this.namespace.rpc, endpoint) ? this.namespace.rpc[endpoint] : undefined;
    if (!handler) return fail(notServed(this.namespace.name, "RPC", endpoint));
    if (this.openCalls() >= SOCKET_LIMITS.maxOpenCalls) return fail(new ApiError(429, `Too many open calls on one connection (at most ${SOCKET_LIMITS.maxOpenCalls})`));
    const controller = new AbortController();
    this.rpcs.set(callId, controller);
    const { clientIdentifier } = this;
    withEngineLeases(() => this.underKey(endpoint, () => handler(parameter, { signal: controller.signal, clientIdentifier }))).then(
      (result) => {
        if (this.rpcs.get(callId) !== controller) return;
        this.rpcs.delete(callId);
        this.send(result === undefined ? { type: "rpcResult", callId } : { type: "rpcResult", callId, result });
      },
      (error) => {
        if (this.rpcs.get(callId) !== controller) return;
        this.rpcs.delete(callId);
        logFailure(this.namespace.name, endpoint, error);
        fail(error);
      },
    );
  }

  private startChannel(endpoint: string, channelId: number, parameter: unknown): void {
    const handler = Object.hasOwn(this.namespace.channels, endpoint) ? this.namespace.channels[endpoint] : undefined;
    if (!handler) return this.failChannel(channelId, notServed(this.namespace.name, "channel", endpoint));
    // The client now believes the id names the new channel: the old one cannot go on either.
    if (this.channels.has(channelId)) return this.failChannel(channelId, new ApiError(400, `Channel id ${channelId} is already in use on this connection`));
    if (this.openCalls() >= SOCKET_LIMITS.maxOpenCalls) {
      return this.failChannel(channelId, new ApiError(429, `Too many open calls on one connection (at most ${SOCKET_LIMITS.maxOpenCalls})`));
    }
    const channel: OpenChannel = { controller: new AbortController(), listeners: [] };
    this.channels.set(channelId, channel);
    const current = () => this.channels.get(channelId) === channel;
    const context: ChannelContext = {
      signal: channel.controller.signal,
      clientIdentifier: this.clientIdentifier,
      send: (message) => {
        if (current()) this.send({ type: "channelSend", channelId, message });
      },
      onPacket: (listener) => channel.listeners.push(listener),
    };
    withEngineLeases(() => this.underKey(endpoint, () => handler(parameter, context))).then(
      () => {
        if (!current()) return;
        this.channels.delete(channelId);
        this.send({ type: "channelClose", channelId });
      },
      (error) => {
        if (!current()) return;
        logFailure(this.namespace.name, endpoint, error);
        this.failChannel(channelId, error);
      },
    );
  }

  private failChannel(channelId: number, error: unknown): void {
    const open = this.channels.get(channelId);
    if (open) {
      this.channels.delete(channelId);
      open.controller.abort(error);
    }
    this.send({ type: "channelError", channelId, error: serializeError(error) });
  }

  private send(frame: ServerFrame): void {
    this.write(frame);
  }

  private write(value: unknown): void {
    if (!this.closed) this.io.send(JSON.stringify(value));
  }
}

/** Runs a call in its own lease scope: the engines it is handed stay loaded until it ends. */
function withEngineLeases<T>(call: () => Promise<T>): Promise<T> {
  const leases = new EngineLeases();
  return leases.run(call).finally(() => leases.end());
}

function notServed(namespace: string, kind: "RPC" | "channel", endpoint: string): ApiError {
  return new ApiError(501, `The ${kind} endpoint "${endpoint}" on /${namespace} is not served by llamux (it serves models: /llm, /embedding and /system)`);
}

function logFailure(namespace: string, endpoint: string, error: unknown): void {
  const status = error instanceof ApiError ? error.status : 500;
  if (status >= 500 && status !== 501) log.error(`/${namespace} ${endpoint}: ${(error as Error)?.message ?? String(error)}`);
  else log.debug(`/${namespace} ${endpoint}: ${(error as Error)?.message ?? String(error)}`);
}
