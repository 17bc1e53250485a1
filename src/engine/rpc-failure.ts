// How an engine that uses RPC servers fails, in words that name the servers: llama.cpp's RPC back end
// ends its process with GGML_ABORT (SIGABRT) when a server disconnects or answers out of protocol, and
// has no time limit on joining the servers.

/** `"host:port", "host:port"` */
export const rpcServerNames = (servers: readonly string[]) => servers.map((s) => `"${s}"`).join(", ");

/** Whether an exit of an engine with these RPC servers was most likely the back end giving up on one of them. */
export const isRpcAbort = (servers: readonly string[] | undefined, reason: string) => (servers?.length ?? 0) > 0 && reason === "killed by SIGABRT";

export const rpcAbortNote = (servers: readonly string[]) =>
  `llama.cpp's RPC back end ends the engine when an RPC server it uses (${rpcServerNames(servers)}) disconnects or answers out of protocol`;
