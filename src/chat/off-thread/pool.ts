// Runs jobs (jobs.ts) on a small pool of worker threads, so that rendering a template or building a
// grammar never holds the thread that serves HTTP. Each job has a time limit: a worker still busy past it
// is ended (whatever it was looping on) and replaced, and the job fails as its input's fault.
import { isCompiledExecutable, moduleUrl } from "../../binary/self.ts";
import { StructuredOutputError } from "../structured/errors.ts";
import { ChatTemplateError } from "../template.ts";
import type { JobKind, JobInput, JobResult } from "./jobs.ts";
import type { JobAnswer, JobMessage } from "./worker.ts";

/** Worker threads at most: renders are short; two keep one hostile job from queueing every other. */
export const OFF_THREAD_WORKERS = 2;
/** A job still running after this long is stopped (Jinja's own bound is 1 s of rendering). */
export const OFF_THREAD_LIMIT_MS: Record<JobKind, number> = { chatText: 5_000, goPrompt: 5_000, grammar: 10_000 };

// In the compiled executable the worker is an entrypoint of its own (scripts/build-binary.ts), named by
// its path from the repository's root.
const WORKER_URL = isCompiledExecutable ? "./src/chat/off-thread/worker.ts" : moduleUrl("./worker", import.meta.url);

interface Job {
  message: JobMessage;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: ReturnType<typeof setTimeout>;
}

/** An error from the worker as the same kind of error here: the input's fault (a 400) or the server's. */
function rebuild(kind: JobKind, error: { name: string; message: string; keyword?: string }): Error {
  if (error.name === "StructuredOutputError") return new StructuredOutputError(error.message, error.keyword);
  if (/^(ChatTemplate|JinjaLimit|Template(Syntax|Execution|Limit|Value))Error$/.test(error.name)) return new ChatTemplateError(error.message);
  return new Error(`Cannot run ${kind} off the serving thread: ${error.message}`);
}

function overTime(kind: JobKind): Error {
  const seconds = OFF_THREAD_LIMIT_MS[kind] / 1000;
  return kind === "grammar"
    ? new StructuredOutputError(`Cannot build the output grammar within ${seconds} s: the schema or tool list is too large`)
    : new ChatTemplateError(`Cannot render the chat template within ${seconds} s`);
}

class OffThreadPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;

  run<K extends JobKind>(kind: K, input: JobInput<K>): Promise<JobResult<K>> {
    return new Promise((resolve, reject) => {
      this.queue.push({ message: { id: this.nextId++, kind, input }, resolve: resolve as (result: unknown) => void, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => !s.job) ?? (this.slots.length < OFF_THREAD_WORKERS ? this.newSlot() : undefined);
      if (!slot) return;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      slot.timer = setTimeout(() => this.stop(slot, overTime(job.message.kind)), OFF_THREAD_LIMIT_MS[job.message.kind]);
      slot.worker.postMessage(job.message);
    }
  }

  private newSlot(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL) };
    slot.worker.unref();
    slot.worker.onmessage = (event: MessageEvent<JobAnswer>) => {
      const job = slot.job;
      if (!job || event.data.id !== job.message.id) return;
      this.finish(slot);
      if ("error" in event.data) job.reject(rebuild(job.message.kind, event.data.error));
      else job.resolve(event.data.result);
      this.dispatch();
    };
    // A worker that dies (out of memory) fails its job and is replaced on the next one.
    slot.worker.addEventListener("close", () => this.stop(slot, new Error("The off-thread worker ended")));
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.worker.unref();
  }

  /** Ends the slot's worker and fails its job; the next job gets a new worker. */
  private stop(slot: Slot, error: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    const job = slot.job;
    this.finish(slot);
    slot.worker.terminate();
    job?.reject(error);
    this.dispatch();
  }
}

const pool = new OffThreadPool();

/** Runs a job on a worker thread; rejects with the job's own error, or its input's fault past the time limit. */
export function runOffThread<K extends JobKind>(kind: K, input: JobInput<K>): Promise<JobResult<K>> {
  return pool.run(kind, input);
}
