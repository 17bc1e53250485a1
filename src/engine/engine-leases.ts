// The engines one piece of work (an HTTP request with its streamed answer, an SDK call) was handed,
// held until that work ends: the model manager never stops an engine someone holds, for room, for a
// reload or for idleness, even in the gap between being handed it and sending it anything (rendering
// the prompt, tokenizing, or after generation, tokenizing the reply). Ollama's scheduler counts
// references to a runner per request in the same way. The work's scope travels with its async calls,
// so routes need not pass it along.
import { AsyncLocalStorage } from "node:async_hooks";

const currentScope = new AsyncLocalStorage<EngineLeases>();

export class EngineLeases {
  private readonly releases: Array<() => void> = [];
  private ended = false;

  /** Runs `work` with this scope current: engines it is handed are held by the scope. */
  run<T>(work: () => T): T {
    return currentScope.run(this, work);
  }

  /** Records a hold; `release` is called once when the scope ends. False if it has ended already. */
  hold(release: () => void): boolean {
    if (this.ended) return false;
    this.releases.push(release);
    return true;
  }

  get holding(): boolean {
    return this.releases.length > 0;
  }

  /** The work is over: every engine it held may be stopped again. Safe to call more than once. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const release of this.releases.splice(0)) release();
  }

  /** The scope of the work running now, if it has one. */
  static current(): EngineLeases | undefined {
    return currentScope.getStore();
  }
}
