// Keeps one engine child process per model and load options, shared by every route and profile:
// starts it on demand (again after a crash), stops it after its keep-alive of idleness, and caps how
// many are loaded by stopping the least recently used idle one.
import { EngineProcess } from "./engine-process.ts";
import type { EngineOptions } from "./types.ts";
import { logger } from "../log.ts";

const log = logger("models");

export const DEFAULT_MAX_LOADED_MODELS = 3;
/** How often idle engines are checked against their keep-alive. */
const SWEEP_INTERVAL_MS = 1000;

/** Milliseconds an idle engine stays loaded; Infinity keeps it until the server stops. */
export type KeepAlive = number;

/** How a request's keep-alive combines with the one a loaded engine already has. */
export type KeepAlivePolicy =
  /** the longest asked for wins */
  | "longest"
  /** the request's replaces it, shorter or not (Ollama's keep_alive) */
  | "replace"
  /** only the request that loads the engine sets it (LM Studio's ttl) */
  | "on-load";

/** A loaded engine and when it will be unloaded if nothing uses it. */
export interface LoadedEngine {
  engine: EngineProcess;
  keepAliveMs: KeepAlive;
  /** Milliseconds since the epoch; Infinity for an engine kept until the server stops. */
  expiresAt: number;
  /** When a request last asked for it (ms since the epoch). */
  lastUsed: number;
}

function combineKeepAlive(current: KeepAlive, requested: KeepAlive, policy: KeepAlivePolicy): KeepAlive {
  if (policy === "replace") return requested;
  if (policy === "on-load") return current;
  return Math.max(current, requested);
}

interface Entry {
  key: string;
  starting: Promise<EngineProcess>;
  engine?: EngineProcess;
  keepAliveMs: KeepAlive;
  lastUsed: number;
}

/** Models with the same file but other load options (context, sequences) are separate engines. */
function engineKey(options: EngineOptions): string {
  const { modelPath, ...load } = options;
  return `${modelPath}\u0000${JSON.stringify(sortedKeys(load))}`;
}

/** The value with every object's keys in order, nested ones too (speculative options), for a stable key. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]));
}

export class ModelManager {
  private readonly entries = new Map<string, Entry>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly maxLoaded = DEFAULT_MAX_LOADED_MODELS) {}

  /**
   * The running engine for these options, started (and the model loaded) when none is alive.
   * `keepAliveMs` is how long it may stay idle before it is stopped; `policy` says how it combines with
   * the keep-alive of an engine that is already loaded (by default the longest asked for wins).
   */
  async engine(options: EngineOptions, keepAliveMs: KeepAlive = Infinity, policy: KeepAlivePolicy = "longest"): Promise<EngineProcess> {
    const key = engineKey(options);
    const existing = this.entries.get(key);
    if (existing) {
      existing.lastUsed = Date.now();
      existing.keepAliveMs = combineKeepAlive(existing.keepAliveMs, keepAliveMs, policy);
      const engine = await existing.starting.catch(() => undefined);
      if (engine?.alive) return engine;
      if (this.entries.get(key) === existing) this.entries.delete(key);
    }
    await this.makeRoom();
    const entry: Entry = { key, keepAliveMs, lastUsed: Date.now(), starting: undefined as never };
    entry.starting = EngineProcess.start(options, (engine, reason, expected) => {
      if (!expected) log.warn(`engine for "${options.modelPath}" (pid ${engine.pid}) exited: ${reason}`);
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    this.entries.set(key, entry);
    this.startSweeper();
    try {
      entry.engine = await entry.starting;
      return entry.engine;
    } catch (error) {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw error;
    }
  }

  /** Engines that are loaded and running now. */
  async loaded(): Promise<EngineProcess[]> {
    const engines = await Promise.all([...this.entries.values()].map((e) => e.starting.catch(() => undefined)));
    return engines.filter((e): e is EngineProcess => e?.alive === true);
  }

  /** The engines that are loaded now, with their keep-alive and expiry. */
  loadedEngines(): LoadedEngine[] {
    const now = Date.now();
    const loaded: LoadedEngine[] = [];
    for (const entry of this.entries.values()) {
      const engine = entry.engine;
      if (!engine?.alive) continue;
      // A busy engine's idle time has not started: it expires a keep-alive after now at the earliest.
      const idleSince = engine.inFlight > 0 ? now : Math.max(entry.lastUsed, engine.idleSince);
      loaded.push({ engine, keepAliveMs: entry.keepAliveMs, expiresAt: idleSince + entry.keepAliveMs, lastUsed: entry.lastUsed });
    }
    return loaded;
  }

  /**
   * Unloads an engine: at once when it is idle, else as soon as its last request ends (its keep-alive
   * becomes 0). Resolves when it has stopped, or at once in the second case.
   */
  async unload(engine: EngineProcess): Promise<void> {
    const entry = [...this.entries.values()].find((e) => e.engine === engine);
    if (!entry) return;
    entry.keepAliveMs = 0;
    if (engine.inFlight > 0) return;
    log.info(`unloading "${engine.options.modelPath}" as asked`);
    this.entries.delete(entry.key);
    await engine.stop();
  }

  /** Stops every engine; their in-flight requests end with an error, which their readers get to see. */
  async stopAll(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    const engines = await Promise.all([...this.entries.values()].map((e) => e.starting.catch(() => undefined)));
    this.entries.clear();
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

  /** At the cap, stops the least recently used idle engine; busy ones are never stopped for room. */
  private async makeRoom(): Promise<void> {
    const loaded = [...this.entries.values()].filter((e) => e.engine?.alive);
    if (loaded.length < this.maxLoaded) return;
    const idle = loaded.filter((e) => e.engine!.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    const victim = idle[0];
    if (!victim) {
      log.warn(`${loaded.length} models are loaded and busy; loading one more than the cap of ${this.maxLoaded}`);
      return;
    }
    log.info(`unloading "${victim.engine!.options.modelPath}" to stay within ${this.maxLoaded} loaded models`);
    this.entries.delete(victim.key);
    await victim.engine!.stop();
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.unloadExpired(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  private unloadExpired(): void {
    const now = Date.now();
    for (const entry of this.entries.values()) {
      const engine = entry.engine;
      if (!engine?.alive || engine.inFlight > 0 || !Number.isFinite(entry.keepAliveMs)) continue;
      const idleSince = Math.max(entry.lastUsed, engine.idleSince);
      if (now - idleSince < entry.keepAliveMs) continue;
      log.info(`unloading "${engine.options.modelPath}": idle for ${Math.round((now - idleSince) / 1000)} s`);
      this.entries.delete(entry.key);
      void engine.stop();
    }
  }
}
