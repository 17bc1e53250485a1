// Entry of the SDK's engine Worker: hosts one Engine on its own thread, so that decoding never blocks
// the program's event loop. The same host code as the server's engine child process, over postMessage.
import type { ChildMessage, ParentMessage } from "./protocol.ts";
import { engineMessageHandler } from "./engine-host.ts";
import { loadNative } from "../../ffi/native.ts";

declare const self: Worker;

const GGML_LOG_LEVEL_ERROR = 4;

/**
 * llama.cpp's log sink is process-wide and points at this thread's callback; once the thread is gone
 * a later log line from another Worker's engine would call into freed memory. So the sink is
 * cleared before the thread ends (other engines' errors still reach their callers as errors).
 */
function detachLog(): void {
  try {
    loadNative().shim.llamux_log_install(null, GGML_LOG_LEVEL_ERROR);
  } catch {
    // The libraries never loaded, so no sink was installed.
  }
}

const handle = engineMessageHandler(
  (message: ChildMessage) => self.postMessage(message),
  () => {
    detachLog();
    // Ends this thread only; the engine's dispose freed the native model and context.
    process.exit(0);
  },
);
self.onmessage = (event: MessageEvent<ParentMessage>) => handle(event.data);
