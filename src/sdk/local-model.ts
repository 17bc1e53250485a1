// A model loaded lazily into the SDK's engine Worker: the first call that needs it starts the load,
// later calls share it, and a load failure is the rejection of every call that waited for it.
import { WorkerEngine } from "../engine/worker-engine.ts";
import type { EngineOptions } from "../engine/types.ts";
import { resolveModelPath, type ModelSourceOptions } from "./model-source.ts";

export class DisposedError extends Error {
  constructor(what: string) {
    super(`Cannot use ${what}: it was disposed`);
    this.name = "DisposedError";
  }
}

export type LocalEngineOptions = Omit<EngineOptions, "modelPath">;

export class LocalModel {
  private loading: Promise<WorkerEngine> | undefined;
  private disposed = false;

  constructor(readonly model: string, private readonly engineOptions: LocalEngineOptions, private readonly source: ModelSourceOptions = {}) {}

  /** The loaded engine; loads the model on first use. */
  engine(): Promise<WorkerEngine> {
    if (this.disposed) return Promise.reject(new DisposedError(`model "${this.model}"`));
    this.loading ??= resolveModelPath(this.model, this.source).then((modelPath) => WorkerEngine.start({ ...this.engineOptions, modelPath }));
    return this.loading;
  }

  /** Frees the model and ends its Worker; safe to call more than once. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const engine = await this.loading?.catch(() => undefined);
    await engine?.stop();
  }
}
