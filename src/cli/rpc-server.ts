// `llamux rpc-server`: serves this machine's devices (GPUs, else the CPU) to other llamux or llama.cpp
// processes through ggml's RPC back end, as llama.cpp's own rpc-server does. `serve --rpc HOST:PORT`
// on another machine then places part of a model's layers here.
import { parseArgs } from "node:util";
import { physicalCoreCount } from "../../ffi/hardware.ts";
import { logger } from "../log.ts";
import { isLoopbackHost } from "../server/server-options.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

const log = logger("rpc-server");

/** llama.cpp's rpc-server port. */
export const DEFAULT_RPC_PORT = 50052;

export const rpcServerFlags = {
  host: { type: "string", value: "HOST", help: "address to bind (default 127.0.0.1)" },
  port: { type: "string", short: "p", value: "PORT", help: `port (default ${DEFAULT_RPC_PORT})` },
  threads: { type: "string", short: "t", value: "N", help: "CPU threads when serving the CPU (default: physical cores)" },
  "cache-dir": { type: "string", value: "DIR", help: "keep tensors received from clients in DIR, so a restarted client sends each once" },
  ...helpFlag,
} as const satisfies Flags;

export const rpcServerPage: HelpPage = {
  usage: ["llamux rpc-server [options]"],
  description: `Serves this machine's devices (its GPUs, else its CPU) over ggml's RPC protocol, so that a llamux
server elsewhere can run part of a model's layers here: "llamux serve MODEL --rpc THIS_HOST:PORT".
Speaks the protocol of llama.cpp's own rpc-server from the same release, so either side may be either.

The protocol has no authentication and no encryption: anyone who can reach the port can run
computations and read the data sent. Bind it to loopback (the default) or to an address on a network
you trust, never to one the internet reaches.`,
  flags: rpcServerFlags,
};

export const rpcServerHelp = renderHelp(rpcServerPage);

export async function rpcServerCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: rpcServerFlags,
    strict: true,
  });
  if (values.help) {
    console.log(rpcServerHelp);
    return 0;
  }
  const host = values.host ?? "127.0.0.1";
  const port = Number(values.port ?? DEFAULT_RPC_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port must be a port number, got "${values.port}"`);
  const threads = values.threads === undefined ? physicalCoreCount() : Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) throw new UsageError(`--threads must be a positive integer, got "${values.threads}"`);
  if (!isLoopbackHost(host)) {
    log.warn(`listening on ${host}: the RPC protocol has no authentication; anyone who can reach ${host}:${port} can use this machine's devices. Use it only on a trusted network.`);
  }
  // Loaded only now: --help must not need the native libraries.
  const { serveRpc } = await import("../../ffi/rpc.ts");
  log.info(`serving this machine's devices over RPC on ${host}:${port} (${threads} threads)`);
  return serveRpc(`${host}:${port}`, { threads, ...(values["cache-dir"] ? { cacheDir: values["cache-dir"] } : {}) });
}
