// Parent side of an engine child process: starts `llamux __engine`, loads a model in it, routes
// requests and their event streams, and turns an unexpected exit into an error for every request in
// flight. The parent never opens libllama itself.
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { ChildMessage, ParentMessage } from "./protocol.ts";
import { EngineError, type EngineEvent, type EngineOptions, type EngineStats, type GenerateRequest, type ModelInfo } from "./types.ts";
import type { EventSink } from "./sequence.ts";

/** The command that re-invokes this program as an engine child. */
function childCommand(): string[] {
  const compiled = import.meta.path.startsWith("/$bunfs/");
  return compiled ? [process.execPath, "__engine"] : [process.execPath, join(import.meta.dir, "child-main.ts")];
}

let nextRequestId = 0;

export class EngineProcess {
  private readonly sinks = new Map<string, EventSink>();
  private readonly calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextCallId = 0;
  private exited = false;
  private stopping = false;
  /** When the last request in flight finished (ms since epoch). */
  idleSince = Date.now();
  private openStreams = 0;
  private drainWaiters: Array<() => void> = [];
  info!: ModelInfo;

  private constructor(private readonly child: Subprocess, readonly options: EngineOptions) {}

  /** Starts a child and loads the model; rejects with the child's reason if loading fails. */
  /** `onExit` learns whether the exit was asked for (stop) or not (a crash, a kill). */
  static start(options: EngineOptions, onExit?: (process: EngineProcess, reason: string, expected: boolean) => void): Promise<EngineProcess> {
    return new Promise((resolve, reject) => {
      let engine: EngineProcess | undefined;
      let loaded = false;
      const child = Bun.spawn(childCommand(), {
        stdio: ["ignore", "inherit", "inherit"],
        env: process.env,
        ipc: (message: ChildMessage) => {
          if (message.type === "loaded") {
            loaded = true;
            engine!.info = message.info;
            resolve(engine!);
          } else if (message.type === "load_failed") {
            reject(new EngineError("engine_failure", message.message));
            engine!.stopping = true;
            engine!.kill();
          } else {
            engine!.receive(message);
          }
        },
        onExit: (_proc, exitCode, signalCode) => {
          const reason = signalCode ? `killed by ${signalCode}` : `exit code ${exitCode}`;
          engine!.handleExit(reason);
          if (!loaded) reject(new EngineError("engine_failure", `Cannot load model "${options.modelPath}": engine process ended (${reason})`));
          onExit?.(engine!, reason, engine!.stopping);
        },
      });
      engine = new EngineProcess(child, options);
      engine.post({ type: "load", options });
    });
  }

  get pid(): number {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  get inFlight(): number {
    return this.sinks.size;
  }

  /** Sends a request; events arrive at `sink` until a done or error event. Returns the request id. */
  submit(request: Omit<GenerateRequest, "id">, sink: EventSink): string {
    const id = `r${++nextRequestId}`;
    if (this.exited) {
      sink({ type: "error", id, code: "engine_exited", message: `Engine for "${this.options.modelPath}" is not running` });
      return id;
    }
    this.sinks.set(id, sink);
    this.post({ type: "submit", request: { ...request, id } });
    this.idleSince = Infinity;
    return id;
  }

  cancel(id: string): void {
    if (this.sinks.has(id)) this.post({ type: "cancel", id });
  }

  /** Streams a request's events; breaking out of the loop or aborting `signal` cancels it. */
  async *generate(request: Omit<GenerateRequest, "id">, signal?: AbortSignal): AsyncGenerator<EngineEvent> {
    const pending: EngineEvent[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    const id = this.submit(request, (event) => {
      pending.push(event);
      wake?.();
    });
    const onAbort = () => this.cancel(id);
    signal?.addEventListener("abort", onAbort);
    this.openStreams++;
    try {
      for (;;) {
        while (pending.length > 0) {
          const event = pending.shift()!;
          if (event.type !== "token") finished = true;
          yield event;
          if (finished) return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      if (!finished) this.cancel(id);
      if (--this.openStreams === 0) for (const wake of this.drainWaiters.splice(0)) wake();
    }
  }

  /** Resolves once every stream from generate() has been read to its end (or abandoned). */
  drained(timeoutMs = 2000): Promise<void> {
    if (this.openStreams === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  tokenize(text: string, { addSpecial = true, parseSpecial = true } = {}): Promise<number[]> {
    return this.call({ type: "tokenize", callId: 0, text, addSpecial, parseSpecial }) as Promise<number[]>;
  }

  detokenize(tokens: number[]): Promise<string> {
    return this.call({ type: "detokenize", callId: 0, tokens }) as Promise<string>;
  }

  stats(): Promise<EngineStats> {
    return this.call({ type: "stats", callId: 0 }) as Promise<EngineStats>;
  }

  embed(text: string): Promise<{ embedding: number[]; tokens: number }> {
    return this.call({ type: "embed", callId: 0, text }) as Promise<{ embedding: number[]; tokens: number }>;
  }

  /** Asks the child to finish and waits; kills it if it does not exit within `graceMs`. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.exited) return;
    this.stopping = true;
    this.post({ type: "shutdown" });
    const timer = setTimeout(() => this.kill("SIGKILL"), graceMs);
    await this.child.exited;
    clearTimeout(timer);
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    if (!this.exited) this.child.kill(signal);
  }

  private call(message: Extract<ParentMessage, { callId: number }>): Promise<unknown> {
    if (this.exited) return Promise.reject(new EngineError("engine_exited", `Engine for "${this.options.modelPath}" is not running`));
    const callId = ++this.nextCallId;
    return new Promise((resolve, reject) => {
      this.calls.set(callId, { resolve, reject });
      this.post({ ...message, callId });
    });
  }

  private post(message: ParentMessage): void {
    if (!this.exited) this.child.send(message);
  }

  private receive(message: ChildMessage): void {
    if (message.type === "events") {
      for (const event of message.events) {
        const sink = this.sinks.get(event.id);
        if (!sink) continue;
        if (event.type !== "token") {
          this.sinks.delete(event.id);
          if (this.sinks.size === 0) this.idleSince = Date.now();
        }
        sink(event);
      }
    } else if (message.type === "reply") {
      const call = this.calls.get(message.callId);
      this.calls.delete(message.callId);
      if (message.error !== undefined) call?.reject(new Error(message.error));
      else call?.resolve(message.result);
    }
  }

  private handleExit(reason: string): void {
    this.exited = true;
    const message = `Engine for "${this.options.modelPath}" stopped (${reason}) while the request was running`;
    for (const [id, sink] of this.sinks) sink({ type: "error", id, code: "engine_exited", message });
    this.sinks.clear();
    for (const call of this.calls.values()) call.reject(new EngineError("engine_exited", message));
    this.calls.clear();
  }
}
