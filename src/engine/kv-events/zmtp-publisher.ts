// A ZeroMQ PUB socket in TypeScript (ZMTP 3.1 over TCP or a Unix socket, NULL security), so that the
// single executable carries no native ZeroMQ library: libzmq and pyzmq subscribers connect to it as to
// vLLM's publisher. It binds or connects as vLLM decides (bind when the endpoint has "*" or "::", or is
// ipc://), keeps each peer's subscriptions, sends a message only to peers subscribed to a prefix of its
// first frame, and drops messages for a peer whose unsent bytes pass the bound (PUB's high-water mark).
import { type Server, type Socket, connect, createServer } from "node:net";
import { unlinkSync } from "node:fs";
import { logger } from "../../log.ts";

const log = logger("kv-events");

/** Unsent bytes one subscriber may hold before messages to it are dropped. */
export const PEER_BUFFER_LIMIT_BYTES = 64 * 1024 * 1024;
/** A peer's frame larger than this (subscriptions are short) closes it. */
const MAX_INCOMING_FRAME_BYTES = 64 * 1024;
const RECONNECT_MS = 100;

const FLAG_MORE = 0x01;
const FLAG_LONG = 0x02;
const FLAG_COMMAND = 0x04;

export type ZmqEndpoint =
  | { transport: "tcp"; host: string; port: number; bind: boolean }
  | { transport: "ipc"; path: string; bind: true };

/** vLLM's endpoint forms: tcp://*:5557 or tcp://[::]:5557 bind, tcp://host:5557 connects, ipc://PATH binds. */
export function parseZmqEndpoint(endpoint: string): ZmqEndpoint {
  if (endpoint.startsWith("ipc://")) {
    const path = endpoint.slice("ipc://".length);
    if (!path) throw new TypeError(`Cannot use ZeroMQ endpoint "${endpoint}": no socket path`);
    return { transport: "ipc", path, bind: true };
  }
  const match = /^tcp:\/\/(\[[^\]]*\]|[^:]+):(\d+)$/.exec(endpoint);
  const port = Number(match?.[2]);
  const host = match?.[1] ?? "";
  const bind = host.includes("*") || host.includes("::");
  // port 0 binds any free port (tests); a connecting socket needs a real one
  if (!match || !Number.isInteger(port) || port < (bind ? 0 : 1) || port > 65535) {
    throw new TypeError(`Cannot use ZeroMQ endpoint "${endpoint}": expected tcp://HOST:PORT, tcp://*:PORT or ipc://PATH`);
  }
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  return { transport: "tcp", host: bind ? (bare === "*" ? "0.0.0.0" : bare.replace("*", "") || "::") : bare, port, bind };
}

export class ZmtpPublisher {
  private readonly peers = new Set<Peer>();
  private server: Server | undefined;
  private outbound: Socket | undefined;
  private closed = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;

  private constructor(private readonly endpoint: ZmqEndpoint) {}

  /** Binds or connects; resolves once bound (a connecting publisher keeps retrying in the background). */
  static async open(endpoint: string): Promise<ZmtpPublisher> {
    const publisher = new ZmtpPublisher(parseZmqEndpoint(endpoint));
    await publisher.start();
    return publisher;
  }

  /** The bound TCP port (for tcp://*:0 in tests). */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === "object" && address ? address.port : undefined;
  }

  get subscribers(): number {
    return [...this.peers].filter((peer) => peer.ready).length;
  }

  /** Sends one multipart message to every ready peer subscribed to a prefix of its first frame. */
  send(frames: Uint8Array[]): void {
    if (frames.length === 0) return;
    let encoded: Uint8Array | undefined;
    for (const peer of this.peers) {
      if (!peer.ready || !peer.wants(frames[0]!)) continue;
      if (peer.socket.writableLength > PEER_BUFFER_LIMIT_BYTES) continue;
      encoded ??= encodeMessage(frames);
      peer.socket.write(encoded);
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const peer of this.peers) peer.socket.destroy();
    this.peers.clear();
    this.outbound?.destroy();
    this.server?.close();
    if (this.endpoint.transport === "ipc") removeSocketFile(this.endpoint.path);
  }

  private async start(): Promise<void> {
    const endpoint = this.endpoint;
    if (!endpoint.bind) return this.dial();
    const server = createServer((socket) => this.adopt(socket));
    this.server = server;
    if (endpoint.transport === "ipc") removeSocketFile(endpoint.path);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      const ready = () => (server.off("error", reject), resolve());
      if (endpoint.transport === "ipc") server.listen(endpoint.path, ready);
      else server.listen(endpoint.port, endpoint.host, ready);
    });
    server.on("error", (error) => log.warn(`KV-cache event publisher: ${error.message}`));
  }

  private dial(): void {
    if (this.closed || this.endpoint.transport !== "tcp") return;
    const socket = connect(this.endpoint.port, this.endpoint.host);
    this.outbound = socket;
    this.adopt(socket);
    socket.once("close", () => {
      if (!this.closed) this.reconnectTimer = setTimeout(() => this.dial(), RECONNECT_MS);
    });
  }

  private adopt(socket: Socket): void {
    const peer = new Peer(socket);
    this.peers.add(peer);
    socket.setNoDelay(true);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => this.peers.delete(peer));
    socket.on("data", (chunk: Buffer) => {
      try {
        peer.receive(chunk);
      } catch (error) {
        log.debug(`KV-cache event subscriber dropped: ${(error as Error).message}`);
        socket.destroy();
      }
    });
    socket.write(greeting());
  }
}

/** One connection: its handshake state, its subscriptions, and the bytes of a frame still arriving. */
class Peer {
  ready = false;
  private greeted = false;
  private readonly subscriptions: Uint8Array[] = [];
  private pending: Uint8Array = new Uint8Array(0);
  private message: Uint8Array[] = [];

  constructor(readonly socket: Socket) {}

  wants(topic: Uint8Array): boolean {
    return this.subscriptions.some((prefix) => startsWith(topic, prefix));
  }

  receive(chunk: Uint8Array): void {
    this.pending = concat(this.pending, chunk);
    if (!this.greeted) {
      if (this.pending.length < 64) return;
      checkGreeting(this.pending.subarray(0, 64));
      this.greeted = true;
      this.socket.write(command("READY", readyProperties()));
      this.pending = this.pending.subarray(64);
    }
    for (;;) {
      const frame = readFrame(this.pending);
      if (!frame) return;
      this.pending = this.pending.subarray(frame.size);
      if (frame.command) this.onCommand(frame.body);
      else this.onMessageFrame(frame.body, frame.more);
    }
  }

  private onCommand(body: Uint8Array): void {
    const nameLength = body[0] ?? 0;
    const name = new TextDecoder().decode(body.subarray(1, 1 + nameLength));
    const data = body.subarray(1 + nameLength);
    if (name === "READY") {
      const type = readProperties(data).get("socket-type");
      if (type !== "SUB" && type !== "XSUB") throw new Error(`a ${type ?? "untyped"} socket cannot subscribe to a PUB socket`);
      this.ready = true;
    } else if (name === "SUBSCRIBE") {
      this.subscribe(data);
    } else if (name === "CANCEL") {
      this.cancel(data);
    } else if (name === "PING") {
      // PING: 2-byte TTL, then up to 16 bytes of context that PONG returns
      this.socket.write(command("PONG", data.subarray(2)));
    } else if (name === "ERROR") {
      throw new Error("the subscriber sent ERROR");
    }
  }

  /** ZMTP 3.0 peers subscribe with a message: 1 (subscribe) or 0 (cancel), then the prefix. */
  private onMessageFrame(body: Uint8Array, more: boolean): void {
    this.message.push(body);
    if (more) return;
    const [first] = this.message;
    this.message = [];
    if (first?.[0] === 1) this.subscribe(first.subarray(1));
    else if (first?.[0] === 0) this.cancel(first.subarray(1));
  }

  private subscribe(prefix: Uint8Array): void {
    this.subscriptions.push(prefix.slice());
  }

  private cancel(prefix: Uint8Array): void {
    const index = this.subscriptions.findIndex((s) => s.length === prefix.length && startsWith(s, prefix));
    if (index >= 0) this.subscriptions.splice(index, 1);
  }
}

function greeting(): Uint8Array {
  const bytes = new Uint8Array(64);
  bytes[0] = 0xff;
  bytes[9] = 0x7f;
  bytes[10] = 3; // ZMTP 3.1
  bytes[11] = 1;
  bytes.set(new TextEncoder().encode("NULL"), 12);
  return bytes; // as-server 0, filler zeros
}

function checkGreeting(bytes: Uint8Array): void {
  if (bytes[0] !== 0xff || bytes[9] !== 0x7f) throw new Error("not a ZeroMQ peer (bad greeting signature)");
  if (bytes[10]! < 3) throw new Error(`ZMTP ${bytes[10]}.x is not supported (3.0 or later)`);
  const mechanism = new TextDecoder().decode(bytes.subarray(12, 32)).replace(/\0+$/, "");
  if (mechanism !== "NULL") throw new Error(`security mechanism ${mechanism} is not supported (NULL only)`);
}

function readyProperties(): Uint8Array {
  const name = new TextEncoder().encode("Socket-Type");
  const value = new TextEncoder().encode("PUB");
  const bytes = new Uint8Array(1 + name.length + 4 + value.length);
  bytes[0] = name.length;
  bytes.set(name, 1);
  new DataView(bytes.buffer).setUint32(1 + name.length, value.length);
  bytes.set(value, 5 + name.length);
  return bytes;
}

/** Metadata properties of READY; names are case-insensitive. */
function readProperties(data: Uint8Array): Map<string, string> {
  const properties = new Map<string, string>();
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let at = 0; at < data.length;) {
    const nameLength = data[at]!;
    const name = new TextDecoder().decode(data.subarray(at + 1, at + 1 + nameLength));
    if (at + 5 + nameLength > data.length) throw new Error("truncated READY property");
    const valueLength = view.getUint32(at + 1 + nameLength);
    const start = at + 5 + nameLength;
    if (start + valueLength > data.length) throw new Error("truncated READY property");
    properties.set(name.toLowerCase(), new TextDecoder().decode(data.subarray(start, start + valueLength)));
    at = start + valueLength;
  }
  return properties;
}

function command(name: string, data: Uint8Array): Uint8Array {
  const nameBytes = new TextEncoder().encode(name);
  const body = new Uint8Array(1 + nameBytes.length + data.length);
  body[0] = nameBytes.length;
  body.set(nameBytes, 1);
  body.set(data, 1 + nameBytes.length);
  return frame(body, FLAG_COMMAND);
}

function encodeMessage(frames: Uint8Array[]): Uint8Array {
  return concat(...frames.map((body, i) => frame(body, i < frames.length - 1 ? FLAG_MORE : 0)));
}

function frame(body: Uint8Array, flags: number): Uint8Array {
  const long = body.length > 255;
  const header = new Uint8Array(long ? 9 : 2);
  header[0] = flags | (long ? FLAG_LONG : 0);
  if (long) new DataView(header.buffer).setBigUint64(1, BigInt(body.length));
  else header[1] = body.length;
  return concat(header, body);
}

function readFrame(bytes: Uint8Array): { body: Uint8Array; more: boolean; command: boolean; size: number } | undefined {
  if (bytes.length < 2) return undefined;
  const flags = bytes[0]!;
  const long = (flags & FLAG_LONG) !== 0;
  const headerSize = long ? 9 : 2;
  if (bytes.length < headerSize) return undefined;
  const length = long ? Number(new DataView(bytes.buffer, bytes.byteOffset + 1, 8).getBigUint64(0)) : bytes[1]!;
  if (length > MAX_INCOMING_FRAME_BYTES) throw new Error(`frame of ${length} bytes from a subscriber (at most ${MAX_INCOMING_FRAME_BYTES})`);
  if (bytes.length < headerSize + length) return undefined;
  return {
    body: bytes.subarray(headerSize, headerSize + length), more: (flags & FLAG_MORE) !== 0, command: (flags & FLAG_COMMAND) !== 0,
    size: headerSize + length,
  };
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function removeSocketFile(path: string): void {
  try {
    unlinkSync(path);
  } catch { /* not there */ }
}
