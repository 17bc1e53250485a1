// Talks to each RPC server before llama.cpp's RPC back end does, within time limits: a TCP connect,
// the protocol's HELLO and its DEVICE_COUNT, then closes. The back end itself has no time limits and
// trusts every answer: a server that accepts and never answers blocks the engine's load forever, one
// that claims 2^32-1 devices makes it allocate a device record for each (about 900 MB a second), and a
// malformed answer ends it with GGML_ABORT. A server that fails here is an EngineError naming it
// (503 when it cannot be reached or does not answer, 502 when it answers out of protocol) and never
// reaches the back end. Protocol: ggml/src/ggml-rpc/ggml-rpc.cpp of the pinned llama.cpp.
import { connect, type Socket } from "node:net";
import { EngineError } from "./types.ts";
import { rpcProbeTimeoutMs } from "../config.ts";

/** Most devices one RPC server may offer (a machine with 8 GPUs offers 8). */
export const MAX_RPC_DEVICES = 16;

/** RPC_PROTO_MAJOR_VERSION / RPC_PROTO_MINOR_VERSION of the pinned ggml-rpc.h: the back end refuses other majors and newer minors. */
const PROTOCOL_MAJOR = 7;
const PROTOCOL_MINOR = 0;
const CMD_HELLO = 14;
const CMD_DEVICE_COUNT = 15;
/** rpc_msg_hello_req: transport capabilities (all zero: plain TCP, no upgrade). */
const CONN_CAPS_BYTES = 24;
/** rpc_msg_hello_rsp: major, minor, patch, padding, then the server's capabilities. */
const HELLO_ANSWER_BYTES = 4 + CONN_CAPS_BYTES;

/** A request: | command (1 byte) | input size (8 bytes, little-endian) | input |. */
function command(cmd: number, input: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(9 + input.length);
  bytes[0] = cmd;
  new DataView(bytes.buffer).setBigUint64(1, BigInt(input.length), true);
  bytes.set(input, 9);
  return bytes;
}

/** Bytes from the socket, read in exact amounts, each read within a time limit. */
class Conversation {
  private received = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private ended: string | undefined;

  constructor(socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.waiting?.();
    });
    socket.on("close", () => {
      this.ended ??= "closed the connection";
      this.waiting?.();
    });
    socket.on("error", (error) => {
      this.ended = (error as NodeJS.ErrnoException).code ?? error.message;
      this.waiting?.();
    });
  }

  /** Exactly `count` bytes; rejects with what went wrong (`timeout`, or how the connection ended). */
  async read(count: number, timeoutMs: number): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (this.ended) throw new Error(this.ended);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("timeout");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = undefined;
    }
    const bytes = this.received.subarray(0, count);
    this.received = this.received.subarray(count);
    return bytes;
  }
}

function unavailable(endpoint: string, what: string): EngineError {
  return new EngineError("rpc_unavailable", `RPC server "${endpoint}" ${what}`);
}

function outOfProtocol(endpoint: string, what: string): EngineError {
  return new EngineError("rpc_failure", `RPC server "${endpoint}" ${what}; llama.cpp's RPC back end would end the engine on it, so it is not used`);
}

function openSocket(endpoint: string, host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(unavailable(endpoint, `did not accept a connection within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(unavailable(endpoint, `cannot be reached: ${error.code === "ECONNREFUSED" ? "connection refused (is \"llamux rpc-server\" running there?)" : error.code ?? error.message}`));
    });
  });
}

/** Reads one answer: its size (8 bytes) must be `size`, then the bytes. */
async function answer(conversation: Conversation, endpoint: string, size: number, what: string, timeoutMs: number): Promise<Buffer> {
  let header: Buffer;
  try {
    header = await conversation.read(8, timeoutMs);
  } catch (error) {
    const reason = (error as Error).message;
    if (reason === "timeout") throw unavailable(endpoint, `accepted the connection but did not answer ${what} within ${timeoutMs / 1000} s (an RPC server serves one client at a time: is another engine using it?)`);
    throw outOfProtocol(endpoint, `${reason} before answering ${what}`);
  }
  const announced = header.readBigUInt64LE(0);
  if (announced !== BigInt(size)) throw outOfProtocol(endpoint, `answered ${what} with ${announced} bytes where the protocol has ${size}`);
  try {
    return await conversation.read(size, timeoutMs);
  } catch (error) {
    throw outOfProtocol(endpoint, `sent part of its answer to ${what} (${(error as Error).message})`);
  }
}

/** Checks one `host:port` RPC server; resolves with its device count. `timeoutMs` bounds the connect and each answer. */
export async function probeRpcServer(endpoint: string, timeoutMs = rpcProbeTimeoutMs()): Promise<number> {
  // the back end splits at the first colon: an IPv6 address would end the engine (GGML_ABORT)
  const colon = endpoint.indexOf(":");
  const port = Number(endpoint.slice(colon + 1));
  if (colon <= 0 || !/^\d{1,5}$/.test(endpoint.slice(colon + 1)) || port < 1 || port > 65535) {
    throw new EngineError("rpc_failure", `Cannot use RPC server "${endpoint}": llama.cpp's RPC back end takes HOST:PORT with a host name or an IPv4 address`);
  }
  const socket = await openSocket(endpoint, endpoint.slice(0, colon), port, timeoutMs);
  try {
    const conversation = new Conversation(socket);
    socket.write(command(CMD_HELLO, new Uint8Array(CONN_CAPS_BYTES)));
    const hello = await answer(conversation, endpoint, HELLO_ANSWER_BYTES, "the protocol's HELLO", timeoutMs);
    const [major, minor, patch] = [hello[0]!, hello[1]!, hello[2]!];
    if (major !== PROTOCOL_MAJOR || minor > PROTOCOL_MINOR) {
      throw outOfProtocol(endpoint, `speaks RPC protocol ${major}.${minor}.${patch}, this llama.cpp ${PROTOCOL_MAJOR}.${PROTOCOL_MINOR} (run the same llamux or llama.cpp release on both machines)`);
    }
    socket.write(command(CMD_DEVICE_COUNT, new Uint8Array(0)));
    const devices = (await answer(conversation, endpoint, 4, "DEVICE_COUNT", timeoutMs)).readUInt32LE(0);
    if (devices === 0) throw outOfProtocol(endpoint, "offers no devices");
    if (devices > MAX_RPC_DEVICES) throw outOfProtocol(endpoint, `claims ${devices} devices, more than the ${MAX_RPC_DEVICES} llamux accepts from one server`);
    return devices;
  } finally {
    socket.destroy();
  }
}

/** Checks every RPC server, one after another (each serves one client at a time). */
export async function probeRpcServers(endpoints: readonly string[]): Promise<void> {
  const timeoutMs = rpcProbeTimeoutMs();
  for (const endpoint of endpoints) await probeRpcServer(endpoint, timeoutMs);
}
