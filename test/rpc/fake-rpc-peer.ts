// RPC "servers" on loopback that misbehave in the ways issue 31 lists, speaking just enough of ggml's RPC
// protocol (a command byte, an 8-byte size, the input; answers are an 8-byte size and the bytes) to get
// there. Each connection gets the behaviour its index picks, so a peer can answer one connection
// (llamux's probe) and not the next (llama.cpp's back end).
import { createServer, type Server, type Socket } from "node:net";

export type PeerBehaviour =
  /** accepts and never sends a byte */
  | "silent"
  /** closes the connection at once */
  | "hang-up"
  /** answers HELLO with a size the protocol does not have */
  | "garbage"
  /** answers HELLO with protocol version 3.0.0 */
  | "old-protocol"
  /** answers HELLO properly and DEVICE_COUNT with 2^32-1 */
  | "many-devices"
  /** answers HELLO and DEVICE_COUNT (1 device) properly, then nothing more */
  | "probe-only";

function u64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(value));
  return bytes;
}

const helloAnswer = (major: number) => Buffer.concat([u64(28), Buffer.from([major, 0, 0, 0]), Buffer.alloc(24)]);

/** Reads commands (cmd byte, u64 size, input) off a socket and hands each to `onCommand`. */
function onCommands(socket: Socket, onCommand: (cmd: number) => void): void {
  let pending = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const size = Number(pending.readBigUInt64LE(1));
      if (pending.length < 9 + size) return;
      const cmd = pending[0]!;
      pending = pending.subarray(9 + size);
      onCommand(cmd);
    }
  });
}

function behave(socket: Socket, behaviour: PeerBehaviour): void {
  socket.on("error", () => {});
  if (behaviour === "silent") return;
  if (behaviour === "hang-up") return void socket.destroy();
  onCommands(socket, (cmd) => {
    if (cmd === 14 && behaviour === "garbage") socket.write(Buffer.concat([u64(5), Buffer.from("hello")]));
    else if (cmd === 14) socket.write(helloAnswer(behaviour === "old-protocol" ? 3 : 7));
    else if (cmd === 15 && behaviour === "many-devices") socket.write(Buffer.concat([u64(4), Buffer.from([0xff, 0xff, 0xff, 0xff])]));
    else if (cmd === 15 && behaviour === "probe-only") socket.write(Buffer.concat([u64(4), Buffer.from([1, 0, 0, 0])]));
  });
}

export interface FakePeer {
  endpoint: string;
  /** connections accepted so far */
  connections: number;
  close(): Promise<void>;
}

/** A peer on 127.0.0.1 that answers connection i (from 0) with `behaviours[i % behaviours.length]`. */
export async function fakeRpcPeer(...behaviours: PeerBehaviour[]): Promise<FakePeer> {
  const sockets = new Set<Socket>();
  const peer: FakePeer = { endpoint: "", connections: 0, close: async () => {} };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    behave(socket, behaviours[peer.connections++ % behaviours.length]!);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  peer.endpoint = `127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  peer.close = () => new Promise((resolve) => {
    for (const socket of sockets) socket.destroy();
    server.close(() => resolve());
  });
  return peer;
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}
