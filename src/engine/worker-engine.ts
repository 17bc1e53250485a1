// Parent side of the SDK's engine Worker: loads a model on a thread of this process. Unlike a child
// process, a native crash here ends the whole program; in exchange there is no process to start and
// no IPC copy. The Worker keeps the program alive only while a request or call is in flight, so a
// program that forgets dispose() still exits.
import type { ChildMessage, ParentMessage } from "./protocol.ts";
import { EngineError, type EngineOptions } from "./types.ts";
import { EngineClient } from "./engine-client.ts";
import { moduleUrl } from "../binary/self.ts";

const WORKER_URL = moduleUrl("./engine-worker", import.meta.url);

// llama.cpp's backend registry is not thread-safe, and every Worker registers the back ends when it
// loads its first model: loads in one process happen one at a time.
let loadQueue: Promise<unknown> = Promise.resolve();

export class WorkerEngine extends EngineClient {
  private worker!: Worker;
  private closed!: Promise<void>;

  private constructor(options: EngineOptions) {
    super(options);
  }

  /** Starts a Worker and loads the model in it; rejects with the engine's reason if loading fails. */
  static start(options: EngineOptions): Promise<WorkerEngine> {
    const started = loadQueue.then(() => WorkerEngine.load(options));
    loadQueue = started.catch(() => undefined);
    return started;
  }

  private static load(options: EngineOptions): Promise<WorkerEngine> {
    const engine = new WorkerEngine(options);
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_URL);
      engine.worker = worker;
      engine.closed = new Promise((closed) => {
        worker.addEventListener("close", () => {
          engine.handleExit("worker ended");
          reject(new EngineError("engine_failure", `Cannot load model "${options.modelPath}": engine worker ended`));
          closed();
        });
      });
      worker.addEventListener("error", (event) => {
        const reason = (event as ErrorEvent).message || "uncaught error";
        reject(new EngineError("engine_failure", `Cannot load model "${options.modelPath}": ${reason}`));
        worker.terminate();
      });
      worker.onmessage = (event: MessageEvent<ChildMessage>) => {
        const message = event.data;
        if (message.type === "loaded") {
          engine.info = message.info;
          worker.unref();
          resolve(engine);
        } else if (message.type === "load_failed") {
          reject(new EngineError(message.code ?? "engine_failure", message.message));
          void engine.stop();
        } else {
          engine.receive(message);
        }
      };
      engine.post({ type: "load", options });
    });
  }

  /** Frees the model and context and ends the Worker; requests in flight end with an error. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.exited) return this.closed;
    this.worker.ref();
    this.post({ type: "shutdown" });
    const timer = setTimeout(() => this.worker.terminate(), graceMs);
    await this.closed;
    clearTimeout(timer);
  }

  protected send(message: ParentMessage): void {
    this.worker.postMessage(message);
  }

  protected override busyChanged(busy: boolean): void {
    if (busy) this.worker.ref();
    else this.worker.unref();
  }
}
