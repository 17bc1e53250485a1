// Keeps one engine child process per model and starts a new one when the last has exited (crashed
// or was killed), so the next request after a crash loads the model again.
import { EngineProcess } from "./engine-process.ts";
import type { EngineOptions } from "./types.ts";
import { logger } from "../log.ts";

const log = logger("models");

export class ModelManager {
  private readonly engines = new Map<string, Promise<EngineProcess>>();

  /** The running engine for the model, started (and the model loaded) when none is alive. */
  async engine(options: EngineOptions): Promise<EngineProcess> {
    const key = options.modelPath;
    const existing = this.engines.get(key);
    if (existing) {
      const engine = await existing.catch(() => undefined);
      if (engine?.alive) return engine;
      this.engines.delete(key);
    }
    const starting = EngineProcess.start(options, (engine, reason) => {
      log.warn(`engine for "${key}" (pid ${engine.pid}) exited: ${reason}`);
      if (this.engines.get(key) === starting) this.engines.delete(key);
    });
    this.engines.set(key, starting);
    starting.catch(() => {
      if (this.engines.get(key) === starting) this.engines.delete(key);
    });
    return starting;
  }

  /** Engines that are loaded and running now. */
  async loaded(): Promise<EngineProcess[]> {
    const engines = await Promise.all([...this.engines.values()].map((p) => p.catch(() => undefined)));
    return engines.filter((e): e is EngineProcess => e?.alive === true);
  }

  /** Stops every engine; their in-flight requests end with an error, which their readers get to see. */
  async stopAll(): Promise<void> {
    const engines = await Promise.all([...this.engines.values()].map((p) => p.catch(() => undefined)));
    this.engines.clear();
    await Promise.all(engines.map((e) => e?.stop()));
    await Promise.all(engines.map((e) => e?.drained()));
  }

  /** SIGTERM/SIGINT: end in-flight requests with an error, stop every child, then exit. */
  installShutdownHandlers(): void {
    const shutdown = (signal: string) => {
      log.info(`${signal} received: stopping engines`);
      void this.stopAll().finally(() => process.exit(0));
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  }
}
