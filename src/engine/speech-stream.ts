// The parent's view of one speech in flight: PCM chunks pushed as the engine sends them, read by one
// consumer as an async iterable, and the speech's result (or error) once it ends. Leaving the loop early
// calls `onAbandon`, which cancels the speech in the engine.
import type { SpeechResult, SpeechStream } from "./types.ts";

export class PushedSpeech implements SpeechStream {
  private readonly pending: Float32Array[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;
  private settle!: { resolve: (result: SpeechResult) => void; reject: (error: Error) => void };
  readonly done: Promise<SpeechResult>;
  readonly chunks: AsyncIterable<Float32Array>;

  constructor(onAbandon: () => void) {
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // A caller that reads only the chunks must not see its error again as an unhandled rejection.
    this.done.catch(() => undefined);
    this.chunks = { [Symbol.asyncIterator]: () => this.iterate(onAbandon) };
  }

  push(samples: Float32Array): void {
    if (this.ended) return;
    this.pending.push(samples);
    this.wake?.();
  }

  finish(result: SpeechResult): void {
    if (this.ended) return;
    this.ended = true;
    this.settle.resolve(result);
    this.wake?.();
  }

  fail(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    this.settle.reject(error);
    this.wake?.();
  }

  private async *iterate(onAbandon: () => void): AsyncGenerator<Float32Array> {
    let complete = false;
    try {
      for (;;) {
        while (this.pending.length > 0) yield this.pending.shift()!;
        if (this.ended) {
          complete = true;
          if (this.failure) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      if (!complete) onAbandon();
    }
  }
}
