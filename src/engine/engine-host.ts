// The engine side of the host protocol, whatever carries its messages: the server's child process
// (child-main.ts, Bun IPC) or the SDK's Worker (engine-worker.ts, postMessage). It loads one Engine,
// answers calls and sends each step's events together.
import { Engine } from "./engine.ts";
import { EngineError, type EngineEvent, type EngineOptions, type ModelInfo, type VisionInfo } from "./types.ts";
import { probeRpcServers } from "./rpc-probe.ts";
import { addRpcServers } from "../../ffi/rpc.ts";
import type { ChildMessage, ParentMessage } from "./protocol.ts";
import { logger } from "../log.ts";

const log = logger("engine");
/** How a user changes the context each sequence gets, in every front end's words. */
const CONTEXT_HINT = "change it with --ctx-size or --max-model-len, num_ctx or OLLAMA_CONTEXT_LENGTH on profile a, max_model_len in the SDK";

/**
 * Returns the handler for the parent's messages. `send` carries replies and events to the parent;
 * `exit` ends the host once the engine is disposed on "shutdown".
 */
/** How long a shutting-down engine waits for prompt states still being written to disk. */
const SHUTDOWN_WRITE_MS = 2000;

export function engineMessageHandler(send: (message: ChildMessage) => void, exit: () => void): (message: ParentMessage) => void {
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

  /**
   * Loads the engine. With RPC servers, each is probed first (rpc-probe.ts); the back end then joins
   * them between "rpc_joining" and "rpc_joined", which the parent times (it cannot block there forever).
   */
  async function load(options: EngineOptions): Promise<Engine> {
    if (options.rpcServers?.length) {
      await probeRpcServers(options.rpcServers);
      send({ type: "rpc_joining" });
      // let the message leave before this thread blocks in the back end
      await new Promise((resolve) => setImmediate(resolve));
      addRpcServers(options.rpcServers);
      send({ type: "rpc_joined" });
    }
    return Engine.load(options);
  }

  return function handleParentMessage(message: ParentMessage): void {
    switch (message.type) {
      case "load":
        // the parent sends nothing else until it hears "loaded" or "load_failed"
        void load(message.options).then((loaded) => {
          engine = loaded;
          log.info(`loaded ${engine.info.architecture} model "${message.options.modelPath}": ${engine.info.sequences} sequences of up to ${engine.info.contextPerSequence} tokens of context ${engine.info.sharedKvPool ? `sharing ${engine.info.sharedContext}` : "each"} (trained ${engine.info.trainedContextLength}; ${CONTEXT_HINT}), ${engine.info.threads} threads, ${engine.info.compute}${engine.info.vision ? `, ${projectorKind(engine.info.vision)} projector "${engine.info.vision.projectorPath}"` : ""}${speechNote(engine.info, message.options.projectorPath)}${speculationNote(engine.info)}`);
          send({ type: "loaded", info: engine.info });
        }, (error: unknown) => {
          send({ type: "load_failed", message: (error as Error).message, ...(error instanceof EngineError ? { code: error.code } : {}) });
        });
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
      case "speak": {
        const id = message.id;
        try {
          if (!engine) throw new EngineError("engine_failure", "Cannot speak: no model is loaded");
          engine.speak(id, message.request, (event) => send({ type: "speech", id, event }));
        } catch (error) {
          const code = error instanceof EngineError ? error.code : "engine_failure";
          send({ type: "speech", id, event: { type: "error", code, message: (error as Error).message } });
        }
        break;
      }
      case "cancel":
        engine?.cancel(message.id);
        break;
      case "tokenize":
      case "detokenize":
      case "countPrompt":
      case "embed":
      case "rank":
      case "stats":
        try {
          if (!engine) throw new Error("no model is loaded");
          const result = message.type === "tokenize"
            ? engine.tokenize(message.text, message.addSpecial, message.parseSpecial)
            : message.type === "detokenize" ? engine.detokenize(message.tokens)
            : message.type === "countPrompt" ? engine.countPromptTokens(message.prompt)
            : message.type === "embed" ? engine.embed(message.text, message.truncate)
            : message.type === "rank" ? engine.rank(message.query, message.documents) : engine.stats();
          send({ type: "reply", callId: message.callId, result });
        } catch (error) {
          send({ type: "reply", callId: message.callId, error: (error as Error).message, ...(error instanceof EngineError ? { code: error.code } : {}) });
        }
        break;
      case "shutdown": {
        // prompt states on their way to disk get a moment to land (the parent kills after its grace period)
        const written = engine?.dispose("engine shutting down") ?? Promise.resolve();
        engine = undefined;
        void Promise.race([written, Bun.sleep(SHUTDOWN_WRITE_MS)]).then(exit);
      }
    }
  };
}

/** What a loaded projector encodes, in the load log: "vision", "audio" or "vision and audio". */
function projectorKind(projector: VisionInfo): string {
  if (projector.images && projector.audio) return "vision and audio";
  return projector.audio ? "audio" : "vision";
}

function speechNote(info: ModelInfo, projectorPath: string | undefined): string {
  return info.speech ? `, text to speech (${info.speech.pipeline}, ${info.speech.sampleRate} Hz) with projector "${projectorPath}"` : "";
}

function speculationNote(info: ModelInfo): string {
  const s = info.speculative;
  if (!s) return "";
  return s.method === "ngram"
    ? `, speculative decoding by n-gram lookup (up to ${s.maxDraftTokens} tokens)`
    : `, speculative decoding with draft model "${s.draftModelPath}" (up to ${s.maxDraftTokens} tokens)`;
}
