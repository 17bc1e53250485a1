// The parent's view of one speech in flight: PCM chunks pushed as the engine sends them, read by one
// consumer as an async iterable, and the speech's result (or error) once it ends. Leaving the loop early
// calls `onAbandon`, which cancels the speech in the engine.
import { PushQueue } from "./push-queue.ts";
import type { SpeechResult, SpeechStream } from "./types.ts";

export class PushedSpeech implements SpeechStream {
  private readonly queue = new PushQueue<Float32Array>();
  private settle!: { resolve: (result: SpeechResult) => void; reject: (error: Error) => void };
  readonly done: Promise<SpeechResult>;
  readonly chunks: AsyncIterable<Float32Array>;

  constructor(onAbandon: () => void) {
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // A caller that reads only the chunks must not see its error again as an unhandled rejection.
    this.done.catch(() => undefined);
    this.chunks = { [Symbol.asyncIterator]: () => this.queue.values(onAbandon) };
  }

  push(samples: Float32Array): void {
    this.queue.push(samples);
  }

  finish(result: SpeechResult): void {
    this.queue.end();
    this.settle.resolve(result);
  }

  fail(error: Error): void {
    this.queue.fail(error);
    this.settle.reject(error);
  }
}
