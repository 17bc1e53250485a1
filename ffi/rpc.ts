// ggml's RPC back end (libggml-rpc.so, built from the pinned source beside the prebuilt libraries):
// remote machines' devices joined to this process's, and this machine's devices served to others.
// The back end's entry points are reached through its registry's proc addresses, as llama.cpp's own
// tools do, so nothing links against the RPC library directly.
import { CFunction, ptr, type Pointer } from "bun:ffi";
import { loadNative } from "./native.ts";
import { cstr } from "./strings.ts";
import { asPointer } from "./pointer.ts";

const DEVICE_TYPE_CPU = 0;

function rpcRegistry(): Pointer {
  const n = loadNative();
  const reg = asPointer(n.ggml.ggml_backend_reg_by_name(cstr("RPC")));
  if (!reg) throw new Error("Cannot use RPC servers: ggml's RPC back end (libggml-rpc.so) is not among the loaded libraries (run \"make\")");
  return reg;
}

function procAddress(name: string): Pointer {
  const n = loadNative();
  const address = asPointer(n.ggml.ggml_backend_reg_get_proc_address(rpcRegistry(), cstr(name)));
  if (!address) throw new Error(`Cannot use RPC servers: the RPC back end lacks ${name}`);
  return address;
}

/** Whether the RPC back end is loaded (for `llamux doctor`). */
export function rpcAvailable(): boolean {
  return asPointer(loadNative().ggml.ggml_backend_reg_by_name(cstr("RPC"))) !== null;
}

/**
 * Joins the devices of each `host:port` RPC server to this process's devices; llama.cpp then places
 * offloaded layers on them (RPC devices first, to keep traffic low). A server that cannot be reached
 * contributes no device and is an error.
 */
export function addRpcServers(endpoints: readonly string[]): void {
  const fresh = endpoints.filter((endpoint) => !joined.has(endpoint));
  if (fresh.length === 0) return;
  const n = loadNative();
  const addServer = CFunction({ ptr: procAddress("ggml_backend_rpc_add_server"), args: ["ptr"], returns: "ptr" });
  for (const endpoint of fresh) {
    // The back end asks the server for its devices now: no answer, no registry.
    const reg = asPointer(addServer(cstr(endpoint)));
    if (!reg) throw new Error(`Cannot use RPC server "${endpoint}": it did not answer (is "llamux rpc-server" running there, and the port reachable?)`);
    n.ggml.ggml_backend_register(reg);
    joined.add(endpoint);
  }
}

/** Servers whose devices are registered already: registering one twice would list its devices twice. */
const joined = new Set<string>();

/** Whether a registered device belongs to the RPC back end. */
export function isRpcDevice(device: Pointer): boolean {
  const n = loadNative();
  const reg = asPointer(n.ggml.ggml_backend_dev_backend_reg(device));
  return reg !== null && String(n.ggml.ggml_backend_reg_name(reg)) === "RPC";
}

/**
 * Serves this machine's devices to RPC clients on `endpoint` (host:port): GPUs when there are any, else
 * the CPU. Blocks the calling thread for as long as the server runs, so callers run it in a Worker.
 */
export function serveRpc(endpoint: string, options: { threads: number; cacheDir?: string }): never {
  const n = loadNative();
  const local: Pointer[] = [];
  const cpus: Pointer[] = [];
  const count = Number(n.ggml.ggml_backend_dev_count());
  for (let i = 0; i < count; i++) {
    const device = asPointer(n.ggml.ggml_backend_dev_get(i))!;
    if (isRpcDevice(device)) continue;
    (n.ggml.ggml_backend_dev_type(device) === DEVICE_TYPE_CPU ? cpus : local).push(device);
  }
  const devices = local.length ? local : cpus.slice(0, 1);
  const array = new BigUint64Array(devices.map((d) => BigInt(d as unknown as number)));
  const start = CFunction({ ptr: procAddress("ggml_backend_rpc_start_server"), args: ["ptr", "ptr", "usize", "usize", "ptr"], returns: "void" });
  start(cstr(endpoint), options.cacheDir ? cstr(options.cacheDir) : null, options.threads, devices.length, array);
  throw new Error(`RPC server on ${endpoint} stopped`);
}

/** Free and total bytes of every RPC device joined so far. */
export function rpcDeviceMemory(): { name: string; freeBytes: number; totalBytes: number }[] {
  const n = loadNative();
  const out: { name: string; freeBytes: number; totalBytes: number }[] = [];
  const count = Number(n.ggml.ggml_backend_dev_count());
  for (let i = 0; i < count; i++) {
    const device = asPointer(n.ggml.ggml_backend_dev_get(i))!;
    if (!isRpcDevice(device)) continue;
    const memory = new BigUint64Array(2);
    n.ggml.ggml_backend_dev_memory(device, ptr(memory.subarray(0, 1)), ptr(memory.subarray(1, 2)));
    out.push({ name: `${n.ggml.ggml_backend_dev_name(device)} (${n.ggml.ggml_backend_dev_description(device)})`, freeBytes: Number(memory[0]), totalBytes: Number(memory[1]) });
  }
  return out;
}
