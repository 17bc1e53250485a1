// Opens llama.cpp once per process: checks struct layouts, loads the ggml back ends (CPU variants
// and any GPU ones shipped beside the libraries), and routes llama.cpp's log into llamux's logger.
import { JSCallback, FFIType, CString, ptr, type Pointer } from "bun:ffi";
import { openNative, type Native } from "./symbols.ts";
import { verifyLayouts } from "./layouts.ts";
import { libraryDir } from "./library-dir.ts";
import { nativeLog } from "./native-log.ts";
import { cstr } from "./strings.ts";
import { type BackendChoice, cpuBackendsFor } from "./cpu-backends.ts";

let native: Native | undefined;
let backendChoice: BackendChoice | undefined;
let logCallback: JSCallback | undefined;

export interface BackendDevice {
  name: string;
  description: string;
  type: "cpu" | "gpu" | "igpu" | "accel" | "other";
  freeBytes: number;
  totalBytes: number;
}

export function loadNative(): Native {
  if (native) return native;
  const dir = libraryDir();
  const opened = openNative(dir);
  verifyLayouts(reportedLayouts(opened));
  installLogCallback(opened);
  backendChoice = cpuBackendsFor(dir);
  if (backendChoice.note) nativeLog().write("debug", "native", backendChoice.note);
  opened.ggml.ggml_backend_load_all_from_path(cstr(backendChoice.dir));
  opened.llama.llama_backend_init();
  native = opened;
  return native;
}

function reportedLayouts(n: Native): Map<string, number> {
  const out = new Map<string, number>();
  const count = n.shim.llamux_layout_count();
  for (let i = 0; i < count; i++) out.set(String(n.shim.llamux_layout_name(i)), Number(n.shim.llamux_layout_value(i)));
  return out;
}

const ggmlLevels = ["none", "debug", "info", "warn", "error", "cont"] as const;
const GGML_LOG_LEVEL_DEBUG = 1;
const GGML_LOG_LEVEL_ERROR = 4;

// llama.cpp logs in fragments (level CONT continues a line); lines are assembled before logging.
// Errors always reach the log; everything else only at LLAMUX_LOG_LEVEL=debug, and the shim drops
// those messages before they reach JavaScript otherwise.
function installLogCallback(n: Native): void {
  let pending = "";
  let pendingLevel = "info";
  logCallback = new JSCallback(
    (level: number, text: Pointer) => {
      const name = ggmlLevels[level] ?? "info";
      if (name !== "cont") pendingLevel = name;
      pending += new CString(text).toString();
      n.shim.llamux_log_free(text);
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.trim()) nativeLog().write(pendingLevel === "error" ? "error" : "debug", "llama.cpp", line);
      }
    },
    { args: [FFIType.i32, FFIType.ptr], returns: FFIType.void, threadsafe: true },
  );
  n.shim.llamux_log_install(logCallback.ptr, nativeLog().debug ? GGML_LOG_LEVEL_DEBUG : GGML_LOG_LEVEL_ERROR);
}

/** Runs a llama.cpp call and returns its result with the error message llama.cpp logged meanwhile, if any. */
export function withLlamaError<T>(call: () => T): { result: T; error: string | undefined } {
  const n = loadNative();
  n.shim.llamux_clear_last_error();
  const result = call();
  const error = String(n.shim.llamux_last_error()).trim();
  return { result, error: error || undefined };
}

export function backendDevices(): BackendDevice[] {
  const n = loadNative();
  const types = ["cpu", "gpu", "igpu", "accel"] as const;
  const devices: BackendDevice[] = [];
  const count = Number(n.ggml.ggml_backend_dev_count());
  for (let i = 0; i < count; i++) {
    const dev = n.ggml.ggml_backend_dev_get(i);
    const memory = new BigUint64Array(2);
    n.ggml.ggml_backend_dev_memory(dev, ptr(memory.subarray(0, 1)), ptr(memory.subarray(1, 2)));
    devices.push({
      name: String(n.ggml.ggml_backend_dev_name(dev)),
      description: String(n.ggml.ggml_backend_dev_description(dev)),
      type: types[n.ggml.ggml_backend_dev_type(dev)] ?? "other",
      freeBytes: Number(memory[0]),
      totalBytes: Number(memory[1]),
    });
  }
  return devices;
}

/** Whether ggml's Intel AMX matrix kernels are loaded (see cpu-backends.ts for why they usually are not). */
export function amxKernelsLoaded(): boolean {
  loadNative();
  return backendChoice!.amxKernels;
}

/** Why the CPU back end was chosen, when there was a choice (for `llamux doctor`). */
export function cpuBackendNote(): string | undefined {
  loadNative();
  return backendChoice!.note;
}

/** "CPU" or the GPU names llama.cpp can offload to, for start-up logs. */
export function computeSummary(): string {
  const gpus = backendDevices().filter((d) => d.type === "gpu" || d.type === "igpu");
  if (gpus.length === 0) return "running on CPU (no GPU back end found)";
  return `GPU offload available: ${gpus.map((g) => `${g.name} (${g.description})`).join(", ")}`;
}
