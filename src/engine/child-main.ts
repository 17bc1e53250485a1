// Entry of an engine child process (`llamux __engine`): hosts one Engine and talks to the parent over
// IPC. A native crash here kills only this process; the parent turns it into errors and can reload.
import { Engine } from "./engine.ts";
import { EngineError, type EngineEvent } from "./types.ts";
import type { ChildMessage, ParentMessage } from "./protocol.ts";
import { logger } from "../log.ts";

const log = logger("engine");

function send(message: ChildMessage): void {
  process.send!(message);
}

// The child must not outlive its parent, even one killed with SIGKILL: the IPC channel closing or a
// change of parent process id (re-parenting to init) ends it.
function exitWithParent(): void {
  const parent = process.ppid;
  process.on("disconnect", () => process.exit(0));
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();
}

export async function engineChildMain(): Promise<void> {
  if (!process.send) {
    process.stderr.write("llamux __engine is internal: it is started by the llamux server\n");
    process.exit(2);
  }
  exitWithParent();
  let engine: Engine | undefined;
  let outbox: EngineEvent[] = [];
  // Events emitted during one synchronous step leave together in one message.
  const emit = (event: EngineEvent) => {
    if (outbox.length === 0) queueMicrotask(() => {
      const events = outbox;
      outbox = [];
      send({ type: "events", events });
    });
    outbox.push(event);
  };

  process.on("message", (message: ParentMessage) => {
    switch (message.type) {
      case "load":
        try {
          engine = Engine.load(message.options);
          log.info(`loaded ${engine.info.architecture} model "${message.options.modelPath}": ${engine.info.sequences} sequences × ${engine.info.contextPerSequence} tokens, ${engine.info.threads} threads, ${engine.info.compute}`);
          send({ type: "loaded", info: engine.info });
        } catch (error) {
          send({ type: "load_failed", message: (error as Error).message });
        }
        break;
      case "submit":
        try {
          if (!engine) throw new EngineError("engine_failure", "Cannot generate: no model is loaded");
          engine.submit(message.request, emit);
        } catch (error) {
          const code = error instanceof EngineError ? error.code : "engine_failure";
          emit({ type: "error", id: message.request.id, code, message: (error as Error).message });
        }
        break;
      case "cancel":
        engine?.cancel(message.id);
        break;
      case "tokenize":
      case "detokenize":
      case "embed":
      case "stats":
        try {
          if (!engine) throw new Error("no model is loaded");
          const result = message.type === "tokenize"
            ? engine.tokenize(message.text, message.addSpecial, message.parseSpecial)
            : message.type === "detokenize" ? engine.detokenize(message.tokens)
            : message.type === "embed" ? engine.embed(message.text) : engine.stats();
          send({ type: "reply", callId: message.callId, result });
        } catch (error) {
          send({ type: "reply", callId: message.callId, error: (error as Error).message });
        }
        break;
      case "shutdown":
        engine?.dispose("engine shutting down");
        process.exit(0);
    }
  });
}

if (import.meta.main) await engineChildMain();
