// The parent side of the host protocol, whatever hosts the engine (a child process or a Worker):
// request ids, event routing to each request's stream, calls with replies, and failing everything in
// flight when the host goes away. Subclasses only start the host, carry messages and stop it.
import type { ChildMessage, ParentMessage, SpeechEvent } from "./protocol.ts";
import { EngineError, isFinalEvent, type EmbedResult, type EngineEvent, type EngineOptions, type EngineStats, type GenerateRequest, type ModelInfo, type PromptInput, type RankResult, type SpeechRequest, type SpeechStream } from "./types.ts";
import type { EventSink } from "./sequence.ts";
import type { EngineHandle, TokenizeOptions } from "./engine-handle.ts";
import { checkRequestTokenIds, checkTokenIds } from "./token-ids.ts";
import { isRpcAbort, rpcAbortNote } from "./rpc-failure.ts";
import { PushQueue } from "./push-queue.ts";
import { PushedSpeech } from "./speech-stream.ts";

let nextRequestId = 0;

export abstract class EngineClient implements EngineHandle {
  private readonly sinks = new Map<string, EventSink>();
  /** Speeches in flight by id: they count as requests (busy, inFlight) like text ones. */
  private readonly speeches = new Map<string, PushedSpeech>();
  private readonly calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextCallId = 0;
  protected exited = false;
  /** When the last request in flight finished (ms since epoch). */
  idleSince = Date.now();
  private openStreams = 0;
  private drainWaiters: Array<() => void> = [];
  info!: ModelInfo;

  protected constructor(readonly options: EngineOptions) {}

  /** Hands a message to the host; called only while it runs. */
  protected abstract send(message: ParentMessage): void;

  /** Told when the first request or call starts and when the last one ends (a Worker host refs itself only while busy). */
  protected busyChanged(_busy: boolean): void {}

  private wasBusy = false;
  private idleWaiters: Array<() => void> = [];

  private noteBusy(): void {
    const busy = this.busy;
    if (busy !== this.wasBusy) this.busyChanged((this.wasBusy = busy));
    if (!busy) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** A request or call (tokenize, embed, …) is in flight. */
  get busy(): boolean {
    return this.sinks.size + this.speeches.size + this.calls.size > 0;
  }

  /** Resolves once nothing is in flight (at once when idle already, or when the host has gone). */
  whenIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  get alive(): boolean {
    return !this.exited;
  }

  get inFlight(): number {
    return this.sinks.size + this.speeches.size;
  }

  /** Sends a request; events arrive at `sink` until a done or error event. Returns the request id. */
  submit(request: Omit<GenerateRequest, "id">, sink: EventSink): string {
    const id = `r${++nextRequestId}`;
    try {
      if (this.info) checkRequestTokenIds(request, this.info.vocabularySize);
    } catch (error) {
      sink({ type: "error", id, code: "invalid_request", message: (error as Error).message });
      return id;
    }
    if (this.exited) {
      sink({ type: "error", id, code: "engine_exited", message: `Engine for "${this.options.modelPath}" is not running` });
      return id;
    }
    this.sinks.set(id, sink);
    this.noteBusy();
    this.post({ type: "submit", request: { ...request, id } });
    this.idleSince = Infinity;
    return id;
  }

  cancel(id: string): void {
    if (this.sinks.has(id) || this.speeches.has(id)) this.post({ type: "cancel", id });
  }

  /** Speaks a text on a speech model; aborting `signal` or leaving the chunks' loop early cancels it. */
  speak(request: SpeechRequest, { signal }: { signal?: AbortSignal } = {}): SpeechStream {
    const id = `s${++nextRequestId}`;
    const speech = new PushedSpeech(() => this.cancel(id));
    if (this.exited) {
      speech.fail(new EngineError("engine_exited", `Engine for "${this.options.modelPath}" is not running`));
      return speech;
    }
    if (this.info && !this.info.speech) {
      speech.fail(new EngineError("invalid_request", `Model "${this.info.path}" does not produce speech`));
      return speech;
    }
    this.speeches.set(id, speech);
    this.noteBusy();
    this.idleSince = Infinity;
    this.post({ type: "speak", id, request });
    const onAbort = () => this.cancel(id);
    signal?.addEventListener("abort", onAbort);
    if (signal?.aborted) onAbort();
    const forget = () => signal?.removeEventListener("abort", onAbort);
    speech.done.then(forget, forget);
    return speech;
  }

  private receiveSpeech(id: string, event: SpeechEvent): void {
    const speech = this.speeches.get(id);
    if (!speech) return;
    if (event.type === "audio") {
      speech.push(event.samples);
      return;
    }
    this.speeches.delete(id);
    if (this.sinks.size + this.speeches.size === 0) this.idleSince = Date.now();
    if (event.type === "end") speech.finish(event.result);
    else speech.fail(new EngineError(event.code, event.message));
  }

  /** Streams a request's events; breaking out of the loop or aborting `signal` cancels it. */
  async *generate(request: Omit<GenerateRequest, "id">, signal?: AbortSignal): AsyncGenerator<EngineEvent> {
    const events = new PushQueue<EngineEvent>();
    const id = this.submit(request, (event) => {
      events.push(event);
      if (isFinalEvent(event)) events.end();
    });
    const onAbort = () => this.cancel(id);
    signal?.addEventListener("abort", onAbort);
    // A client that left before this point (while its model loaded) fires no abort event any more.
    if (signal?.aborted) onAbort();
    this.openStreams++;
    try {
      yield* events.values(() => this.cancel(id));
    } finally {
      signal?.removeEventListener("abort", onAbort);
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

  tokenize(text: string, { addSpecial = true, parseSpecial = true }: TokenizeOptions = {}): Promise<number[]> {
    return this.call({ type: "tokenize", callId: 0, text, addSpecial, parseSpecial }) as Promise<number[]>;
  }

  detokenize(tokens: number[]): Promise<string> {
    try {
      if (this.info) checkTokenIds(tokens, this.info.vocabularySize, "the tokens");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.call({ type: "detokenize", callId: 0, tokens }) as Promise<string>;
  }

  countPromptTokens(prompt: PromptInput): Promise<number> {
    return this.call({ type: "countPrompt", callId: 0, prompt }) as Promise<number>;
  }

  stats(): Promise<EngineStats> {
    return this.call({ type: "stats", callId: 0 }) as Promise<EngineStats>;
  }

  /** `truncate` keeps the first tokens of an input longer than the model takes, instead of failing. */
  embed(text: string, { truncate = false } = {}): Promise<EmbedResult> {
    return this.call({ type: "embed", callId: 0, text, truncate }) as Promise<EmbedResult>;
  }

  /** A reranker's score of each document against the query, batched across documents in the engine. */
  rank(query: string, documents: string[]): Promise<RankResult> {
    return this.call({ type: "rank", callId: 0, query, documents }) as Promise<RankResult>;
  }

  private call(message: Extract<ParentMessage, { callId: number }>): Promise<unknown> {
    if (this.exited) return Promise.reject(new EngineError("engine_exited", `Engine for "${this.options.modelPath}" is not running`));
    const callId = ++this.nextCallId;
    return new Promise((resolve, reject) => {
      this.calls.set(callId, { resolve, reject });
      this.noteBusy();
      this.post({ ...message, callId });
    });
  }

  protected post(message: ParentMessage): void {
    if (!this.exited) this.send(message);
  }

  /** Routes the host's events and replies (not its load result, which starting the host awaits). */
  protected receive(message: ChildMessage): void {
    if (message.type === "events") {
      for (const event of message.events) {
        const sink = this.sinks.get(event.id);
        if (!sink) continue;
        if (isFinalEvent(event)) {
          this.sinks.delete(event.id);
          if (this.sinks.size + this.speeches.size === 0) this.idleSince = Date.now();
        }
        sink(event);
      }
    } else if (message.type === "speech") {
      this.receiveSpeech(message.id, message.event);
    } else if (message.type === "reply") {
      const call = this.calls.get(message.callId);
      this.calls.delete(message.callId);
      if (message.error !== undefined) call?.reject(message.code ? new EngineError(message.code, message.error) : new Error(message.error));
      else call?.resolve(message.result);
    }
    this.noteBusy();
  }

  /**
   * The host is gone: every request and call in flight ends with an error. An engine that uses RPC
   * servers and aborted most likely lost one of them: a 502 that names them.
   */
  protected handleExit(reason: string): void {
    this.exited = true;
    const lostRpc = isRpcAbort(this.options.rpcServers, reason);
    const code = lostRpc ? "rpc_failure" : "engine_exited";
    const message = `Engine for "${this.options.modelPath}" stopped (${reason}) while the request was running${lostRpc ? `: ${rpcAbortNote(this.options.rpcServers!)}` : ""}`;
    for (const [id, sink] of this.sinks) sink({ type: "error", id, code, message });
    this.sinks.clear();
    for (const speech of this.speeches.values()) speech.fail(new EngineError(code, message));
    this.speeches.clear();
    for (const call of this.calls.values()) call.reject(new EngineError(code, message));
    this.calls.clear();
    this.noteBusy();
  }
}
