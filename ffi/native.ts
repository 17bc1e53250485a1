// Opens llama.cpp once per process: checks struct layouts, loads the ggml back ends (CPU variants
// and any GPU ones shipped beside the libraries), and routes llama.cpp's log into llamux's logger.
import { JSCallback, FFIType, CString } from "bun:ffi";
import { openNative, type Native } from "./symbols.ts";
import { verifyLayouts } from "./layouts.ts";
import { libraryDir } from "./library-dir.ts";
import { log, logEnabled } from "../src/log.ts";
import { cstr } from "./strings.ts";

let native: Native | undefined;
let logCallback: JSCallback | undefined;

export interface BackendDevice { name: string; description: string; type: "cpu" | "gpu" | "igpu" | "accel" | "other" }

export function loadNative(): Native {
  if (native) return native;
  const dir = libraryDir();
  const opened = openNative(dir);
  verifyLayouts(reportedLayouts(opened));
  installLogCallback(opened);
  opened.ggml.ggml_backend_load_all_from_path(cstr(dir));
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

// llama.cpp logs in fragments (level CONT continues a line); lines are assembled before logging.
// Errors always reach the log; everything else only at LLAMUX_LOG_LEVEL=debug.
function installLogCallback(n: Native): void {
  let pending = "";
  let pendingLevel = "info";
  logCallback = new JSCallback(
    (level: number, text: number) => {
      const name = ggmlLevels[level] ?? "info";
      if (name !== "cont") pendingLevel = name;
      pending += text ? new CString(text as never).toString() : "";
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const target = pendingLevel === "error" ? "error" : "debug";
        if (line.trim() && logEnabled(target)) log(target, "llama.cpp", line);
      }
    },
    { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.void, threadsafe: true },
  );
  n.llama.llama_log_set(logCallback.ptr, null);
}

export function backendDevices(): BackendDevice[] {
  const n = loadNative();
  const types = ["cpu", "gpu", "igpu", "accel"] as const;
  const devices: BackendDevice[] = [];
  const count = Number(n.ggml.ggml_backend_dev_count());
  for (let i = 0; i < count; i++) {
    const dev = n.ggml.ggml_backend_dev_get(i);
    devices.push({
      name: String(n.ggml.ggml_backend_dev_name(dev)),
      description: String(n.ggml.ggml_backend_dev_description(dev)),
      type: types[n.ggml.ggml_backend_dev_type(dev)] ?? "other",
    });
  }
  return devices;
}

/** "CPU" or the GPU names llama.cpp can offload to, for start-up logs. */
export function computeSummary(): string {
  const gpus = backendDevices().filter((d) => d.type === "gpu" || d.type === "igpu");
  if (gpus.length === 0) return "running on CPU (no GPU back end found)";
  return `GPU offload available: ${gpus.map((g) => `${g.name} (${g.description})`).join(", ")}`;
}
