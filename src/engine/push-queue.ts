// Values pushed from the other side of the host boundary (a child process or a Worker), read by one
// consumer as an async iterable: the pusher ends the queue or fails it, and a reader that leaves before
// the end is told through `onAbandon` (which cancels the work in the engine). Generated events and
// speech chunks both arrive this way.

export class PushQueue<T> {
  private readonly pending: T[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  push(value: T): void {
    if (this.ended) return;
    this.pending.push(value);
    this.wake?.();
  }

  /** No more values: the reader gets those still pending, then its loop ends. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.wake?.();
  }

  /** No more values: the reader gets those still pending, then `error` is thrown. */
  fail(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    this.wake?.();
  }

  /** The values in order until the end; leaving the loop while any remain, or before the end, calls `onAbandon`. */
  async *values(onAbandon?: () => void): AsyncGenerator<T> {
    try {
      for (;;) {
        while (this.pending.length > 0) yield this.pending.shift()!;
        if (this.ended) {
          if (this.failure) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      if (!(this.ended && this.pending.length === 0)) onAbandon?.();
    }
  }
}
