// Where llama.cpp's log lines go. ffi/ knows nothing above it, so the engine hands it llamux's logger
// (setNativeLog); until then, or in a process that never does, errors go to stderr as they are.

export type NativeLogLevel = "error" | "debug";

export interface NativeLog {
  write(level: NativeLogLevel, source: string, message: string): void;
  /** Pass llama.cpp's debug messages on (they are dropped in the shim otherwise). */
  debug: boolean;
}

let current: NativeLog = {
  write: (level, source, message) => {
    if (level === "error") process.stderr.write(`[${source}] ${message}\n`);
  },
  debug: false,
};

/** Routes the bindings' log (set before the libraries load: the debug switch is read then). */
export function setNativeLog(log: NativeLog): void {
  current = log;
}

export function nativeLog(): NativeLog {
  return current;
}
