// Answers a long store operation (/api/pull, /api/create) as Ollama does: a stream of progress lines
// ({"status", "digest"?, "total"?, "completed"?}) ending with "success" or an {"error"} line, or with
// `stream: false` only the last progress object, and an error as an HTTP error.
import type { Context } from "hono";
import type { ProgressHandler, PullProgress } from "../../store/pull-progress.ts";
import { toApiError } from "../api-error.ts";
import { ndjsonResponse } from "./ndjson.ts";

/** Progress as Ollama writes it: `completed` and `total` only when non-zero (Go's omitempty). */
function progressLine(event: PullProgress): Record<string, unknown> {
  return {
    status: event.status,
    ...(event.digest ? { digest: event.digest } : {}),
    ...(event.total ? { total: event.total } : {}),
    ...(event.completed ? { completed: event.completed } : {}),
  };
}

export async function respondProgress(
  c: Context, stream: boolean, run: (onProgress: ProgressHandler, signal: AbortSignal) => Promise<void>, describeError: (error: unknown) => unknown = (e) => e,
): Promise<Response> {
  const signal = c.req.raw.signal;
  if (!stream) {
    let last: PullProgress = { status: "success" };
    try {
      await run((event) => (last = event), signal);
    } catch (error) {
      throw describeError(error);
    }
    return c.json(progressLine(last));
  }
  return ndjsonResponse(async (send) => {
    // Lines go out in order; a client that went away stops the operation at its next progress report.
    let sending: Promise<void> = Promise.resolve();
    const unsent = new AbortController();
    const onProgress: ProgressHandler = (event) => {
      sending = sending.then(() => send(progressLine(event))).catch(() => unsent.abort());
    };
    try {
      await run(onProgress, AbortSignal.any([signal, unsent.signal]));
    } finally {
      await sending;
    }
  }, (error) => ({ error: toApiError(describeError(error)).message }));
}
