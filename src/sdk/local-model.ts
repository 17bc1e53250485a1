// A model loaded lazily into the SDK's engine Worker: the first call that needs it starts the load,
// later calls share it, and a load failure is the rejection of every call that waited for it.
import { WorkerEngine } from "../engine/worker-engine.ts";
import type { EngineOptions } from "../engine/types.ts";
import type { ModelPromptSource } from "../generation/model-prompt.ts";
import { resolveModel, type ModelSource, type ModelSourceOptions } from "./model-source.ts";

export class DisposedError extends Error {
  constructor(what: string) {
    super(`Cannot use ${what}: it was disposed`);
    this.name = "DisposedError";
  }
}

export type LocalEngineOptions = Omit<EngineOptions, "modelPath">;

const withProjector = (source: ModelSource) => (source.projectorPath ? { projectorPath: source.projectorPath } : {});

export class LocalModel {
  private loading: Promise<{ engine: WorkerEngine; source: ModelSource }> | undefined;
  private disposed = false;

  constructor(readonly model: string, private readonly engineOptions: LocalEngineOptions, private readonly sourceOptions: ModelSourceOptions = {}) {}

  private load(): Promise<{ engine: WorkerEngine; source: ModelSource }> {
    if (this.disposed) return Promise.reject(new DisposedError(`model "${this.model}"`));
    this.loading ??= resolveModel(this.model, this.sourceOptions).then(async (source) => ({
      source, engine: await WorkerEngine.start({ ...withProjector(source), ...this.engineOptions, modelPath: source.modelPath }),
    }));
    return this.loading;
  }

  /** The loaded engine; loads the model on first use. */
  async engine(): Promise<WorkerEngine> {
    return (await this.load()).engine;
  }

  /** The model's Modelfile layers the prompt is rendered with: a stored model's Go template (a chat_template option wins) and system prompt. */
  async layers(): Promise<ModelPromptSource> {
    const { source } = await this.load();
    const template = this.engineOptions.chatTemplate === undefined ? source.template : undefined;
    return { ...(template !== undefined ? { template } : {}), ...(source.system !== undefined ? { system: source.system } : {}) };
  }

  /** Frees the model and ends its Worker; safe to call more than once. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const loaded = await this.loading?.catch(() => undefined);
    await loaded?.engine.stop();
  }
}
