// Entry of an off-thread worker: runs one job at a time (jobs.ts) and answers with its result, or with
// its error's class name and message, which the pool turns back into the same kind of error.
import { JOBS, type JobKind } from "./jobs.ts";

declare const self: Worker;

export interface JobMessage {
  id: number;
  kind: JobKind;
  input: unknown;
}

export type JobAnswer =
  | { id: number; result: unknown }
  | { id: number; error: { name: string; message: string; keyword?: string } };

self.onmessage = (event: MessageEvent<JobMessage>) => {
  const { id, kind, input } = event.data;
  try {
    const result = (JOBS[kind] as (input: unknown) => unknown)(input);
    self.postMessage({ id, result } satisfies JobAnswer);
  } catch (error) {
    const { name, message, keyword } = error as Error & { keyword?: string };
    self.postMessage({ id, error: { name, message, ...(keyword !== undefined ? { keyword } : {}) } } satisfies JobAnswer);
  }
};
