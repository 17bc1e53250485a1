// Keeps one engine child process per model and load options, shared by every route and profile:
// starts it on demand (again after a crash), stops it after its keep-alive of idleness, and caps how
// many are loaded by stopping the least recently used idle one. Loads happen one at a time, so the cap
// holds however many requests arrive together; a load that finds every engine busy waits for one to
// finish. With one instance per model (Ollama's rule), a request with other load options reloads the
// model once its requests end, unless the loaded instance already has as much context. An engine held
// by a request's lease scope (engine-leases.ts) is never stopped until that request has ended.
import { EngineProcess } from "./engine-process.ts";
import { EngineLeases } from "./engine-leases.ts";
import { EngineError, type EngineOptions } from "./types.ts";
import { logger } from "../log.ts";

const log = logger("models");

export const DEFAULT_MAX_LOADED_MODELS = 3;
/** How often idle engines are checked against their keep-alive. */
const SWEEP_INTERVAL_MS = 1000;
/**
 * An engine handed out outside any lease scope (a caller that is not a request) counts as in use this
 * long even before anything is submitted to it, so that it is not stopped under that caller.
 */
const HANDOUT_GRACE_MS = 1000;

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

/**
 * How many engines one model may have: one per distinct load options, or one in all (a request with
 * other options reloads it, as Ollama does, or shares a loaded instance with enough context).
 */
export type InstancePolicy = "per-options" | "one";

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
  options: EngineOptions;
  starting: Promise<EngineProcess>;
  engine?: EngineProcess;
  keepAliveMs: KeepAlive;
  lastUsed: number;
  /** Order of last use (ties of lastUsed, within one millisecond, still order). */
  useOrder: number;
  /** When the engine was last handed out outside a lease scope (for HANDOUT_GRACE_MS). */
  handedOutAt: number;
  /** The lease scopes (requests) that hold the engine now: it is not stopped while any does. */
  holders: Set<EngineLeases>;
  /** Being unloaded (for a reload or for room): no new request is given it. */
  retiring?: boolean;
  /** Set once it is being taken out of service: resolves when it has stopped. */
  retired?: Promise<void>;
  /** Loaded under the one-instance rule: another load of the model under that rule replaces it. */
  instances: InstancePolicy;
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

/** What makes two engines the same model: weights, projector, adapters, and embedding or generation. */
function instanceKey(options: EngineOptions): string {
  return JSON.stringify([options.modelPath, options.projectorPath ?? null, options.loraAdapters ?? [], options.embeddings ?? false]);
}

/** The load options apart from the context sizes. */
function withoutContext(options: EngineOptions): string {
  const { contextPerSequence: _, sharedContext: __, ...rest } = options;
  return engineKey(rest);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ModelManager {
  private readonly entries = new Map<string, Entry>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private loadQueue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private uses = 0;
  /** Woken whenever a lease scope lets go of an engine. */
  private releaseWaiters: Array<() => void> = [];
  /** Told, with the reason in words, each time a load starts waiting for another engine to finish. */
  private loadWaitListeners: Array<(reason: string) => void> = [];

  constructor(private readonly maxLoaded = DEFAULT_MAX_LOADED_MODELS) {}

  /**
   * The running engine for these options, started (and the model loaded) when none is alive.
   * `keepAliveMs` is how long it may stay idle before it is stopped; `policy` says how it combines with
   * the keep-alive of an engine that is already loaded (by default the longest asked for wins).
   * `instances` "one" keeps a single engine per model: another instance is unloaded first.
   */
  async engine(
    options: EngineOptions, keepAliveMs: KeepAlive = Infinity, policy: KeepAlivePolicy = "longest", instances: InstancePolicy = "per-options",
  ): Promise<EngineProcess> {
    const scope = EngineLeases.current();
    const loaded = this.take(options, keepAliveMs, policy, instances, scope);
    if (loaded) return loaded;
    return this.oneLoadAtATime(async () => {
      // what the loads before this one left may serve it
      const now = this.take(options, keepAliveMs, policy, instances, scope);
      if (now) return now;
      if (this.stopped) throw new EngineError("engine_exited", `Cannot load model "${options.modelPath}": the server is stopping`);
      if (instances === "one") await this.unloadOtherInstances(options, scope);
      await this.makeRoom(scope);
      return this.start(options, keepAliveMs, instances, scope);
    });
  }

  /**
   * A loaded engine that may serve these options now: none that is starting or being unloaded, except
   * one the asking scope holds already (a request that asks twice must not wait for itself).
   */
  private take(
    options: EngineOptions, keepAliveMs: KeepAlive, policy: KeepAlivePolicy, instances: InstancePolicy, scope: EngineLeases | undefined,
  ): EngineProcess | undefined {
    const usable = (entry: Entry | undefined): entry is Entry =>
      entry?.engine?.alive === true && (!entry.retiring || (scope !== undefined && entry.holders.has(scope)));
    const exact = this.entries.get(engineKey(options));
    if (usable(exact)) return this.handOut(exact, keepAliveMs, policy, scope);
    if (instances !== "one") return undefined;
    // the model's one instance, when only its context differs and it has at least as much
    const wanted = withoutContext(options);
    for (const entry of this.entries.values()) {
      if (!usable(entry) || withoutContext(entry.options) !== wanted) continue;
      const context = entry.engine!.info.contextPerSequence;
      if (options.contextPerSequence !== undefined && context >= options.contextPerSequence) return this.handOut(entry, keepAliveMs, policy, scope);
    }
    return undefined;
  }

  private handOut(entry: Entry, keepAliveMs: KeepAlive, policy: KeepAlivePolicy, scope: EngineLeases | undefined): EngineProcess {
    entry.lastUsed = Date.now();
    entry.useOrder = ++this.uses;
    entry.keepAliveMs = combineKeepAlive(entry.keepAliveMs, keepAliveMs, policy);
    this.hold(entry, scope);
    return entry.engine!;
  }

  /** The scope holds the entry until it ends; without a scope (or after it ended) the handout grace applies. */
  private hold(entry: Entry, scope: EngineLeases | undefined): void {
    if (scope && entry.holders.has(scope)) return;
    const held = scope?.hold(() => {
      entry.holders.delete(scope);
      for (const wake of this.releaseWaiters.splice(0)) wake();
    });
    if (held) entry.holders.add(scope!);
    else entry.handedOutAt = Date.now();
  }

  /** Resolves when the next lease scope lets go of an engine. */
  private nextRelease(): Promise<void> {
    return new Promise((resolve) => this.releaseWaiters.push(resolve));
  }

  /** Whether a scope other than `self` (the one asking for a load) holds the entry. */
  private heldByOthers(entry: Entry, self: EngineLeases | undefined): boolean {
    for (const holder of entry.holders) if (holder !== self) return true;
    return false;
  }

  private async start(options: EngineOptions, keepAliveMs: KeepAlive, instances: InstancePolicy, scope: EngineLeases | undefined): Promise<EngineProcess> {
    const key = engineKey(options);
    const now = Date.now();
    const entry: Entry = {
      key, options, keepAliveMs, instances, lastUsed: now, useOrder: ++this.uses, handedOutAt: now, holders: new Set(), starting: undefined as never,
    };
    entry.starting = EngineProcess.start(options, (engine, reason, expected) => {
      if (!expected) log.warn(`engine for "${options.modelPath}" (pid ${engine.pid}) exited: ${reason}`);
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    this.entries.set(key, entry);
    this.startSweeper();
    try {
      entry.engine = await entry.starting;
      this.hold(entry, scope);
      return entry.engine;
    } catch (error) {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw error;
    }
  }

  /** Runs loads one after another, so that each sees the engines the one before it left. */
  private oneLoadAtATime<T>(load: () => Promise<T>): Promise<T> {
    const run = this.loadQueue.then(load, load);
    this.loadQueue = run.catch(() => undefined);
    return run;
  }

  /**
   * Unloads the model's other instances loaded under the one-instance rule, each once its requests have
   * ended (an instance another profile loaded with its own options stays: `--profile all`).
   */
  /** Resolves with the reason the next time a load starts waiting for a busy or held engine. */
  nextLoadWait(): Promise<string> {
    return new Promise((resolve) => this.loadWaitListeners.push(resolve));
  }

  private loadWaits(reason: string): void {
    log.info(reason);
    for (const listener of this.loadWaitListeners.splice(0)) listener(reason);
  }

  private async unloadOtherInstances(options: EngineOptions, scope: EngineLeases | undefined): Promise<void> {
    const model = instanceKey(options);
    const others = [...this.entries.values()].filter((entry) => entry.engine?.alive && entry.instances === "one" && instanceKey(entry.options) === model);
    for (const entry of others) {
      entry.retiring = true;
      this.loadWaits(`reloading "${options.modelPath}" with other load options (context ${entry.engine!.info.contextPerSequence} → ${options.contextPerSequence ?? "default"}): waiting for its requests to end`);
    }
    await Promise.all(others.map((entry) => this.stopWhenIdle(entry, scope)));
  }

  /**
   * Waits until nothing runs on the entry's engine and no request holds it (but `self`, the scope asking
   * for the stop), then stops it.
   */
  private async stopWhenIdle(entry: Entry, self: EngineLeases | undefined): Promise<void> {
    const engine = entry.engine!;
    while (engine.alive) {
      if (engine.busy) {
        await engine.whenIdle();
        continue;
      }
      if (this.heldByOthers(entry, self)) {
        await this.nextRelease();
        continue;
      }
      const grace = entry.handedOutAt + HANDOUT_GRACE_MS - Date.now();
      if (grace <= 0) break;
      await sleep(grace);
    }
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    await engine.stop();
  }

  /**
   * Takes an engine out of service: no new request is given it, and it stops once its requests have
   * ended (a reload with other options). Resolves when it has stopped.
   */
  async retire(engine: EngineProcess): Promise<void> {
    const entry = [...this.entries.values()].find((e) => e.engine === engine);
    if (!entry) return;
    entry.retiring = true;
    // The request asking for the retirement (a context that grows) holds the engine itself: it does not wait for itself.
    entry.retired ??= this.stopWhenIdle(entry, EngineLeases.current());
    await entry.retired;
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
      // A busy or held engine's idle time has not started: it expires a keep-alive after now at the earliest.
      const idleSince = engine.inFlight > 0 || entry.holders.size > 0 ? now : Math.max(entry.lastUsed, engine.idleSince);
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
    if (engine.inFlight > 0 || this.heldByOthers(entry, EngineLeases.current())) return;
    log.info(`unloading "${engine.options.modelPath}" as asked`);
    this.entries.delete(entry.key);
    await engine.stop();
  }

  /** Stops every engine; their in-flight requests end with an error, which their readers get to see. */
  async stopAll(): Promise<void> {
    this.stopped = true;
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

  /**
   * At the cap, stops the least recently used engine that has nothing in flight and that no request
   * holds; when there is none, waits until there is (busy or held ones are never stopped for room).
   */
  private async makeRoom(scope: EngineLeases | undefined): Promise<void> {
    let waitingSaid = false;
    for (;;) {
      const loaded = [...this.entries.values()].filter((e) => e.engine?.alive);
      if (loaded.length < this.maxLoaded) return;
      const free = (e: Entry) => !e.engine!.busy && !this.heldByOthers(e, scope);
      const victim = loaded.filter(free).sort((a, b) => a.useOrder - b.useOrder)[0];
      if (victim) {
        log.info(`unloading "${victim.engine!.options.modelPath}" to stay within ${this.maxLoaded} loaded models`);
        victim.retiring = true;
        await this.stopWhenIdle(victim, scope);
        continue;
      }
      if (!waitingSaid) this.loadWaits(`${loaded.length} models are loaded and in use (the cap is ${this.maxLoaded}): waiting for one to finish before loading another`);
      waitingSaid = true;
      const busy = loaded.filter((e) => e.engine!.busy);
      await Promise.race([this.nextRelease(), ...busy.map((e) => e.engine!.whenIdle())]);
    }
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
      if (!engine?.alive || engine.busy || entry.holders.size > 0 || !Number.isFinite(entry.keepAliveMs)) continue;
      const idleSince = Math.max(entry.lastUsed, engine.idleSince);
      if (now - idleSince < entry.keepAliveMs) continue;
      log.info(`unloading "${engine.options.modelPath}": idle for ${Math.round((now - idleSince) / 1000)} s`);
      this.entries.delete(entry.key);
      void engine.stop();
    }
  }
}
