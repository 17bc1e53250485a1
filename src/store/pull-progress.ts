// Progress of a pull (or a create), in the shape of Ollama's /api/pull stream: a status line, and for
// a blob being transferred its digest, total size and bytes done so far.

export interface PullProgress {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

export type ProgressHandler = (event: PullProgress) => void;

/** `pulling 3c168af1dea0`: the status Ollama shows for a blob (12 hex characters of its digest). */
export function pullingStatus(digest: string): string {
  return `pulling ${digest.replace(/^sha256[:-]/, "").slice(0, 12)}`;
}

/** Calls `handler` at most once per `intervalMs` for the same status, but always for the last event (completed === total). */
export function throttledProgress(handler: ProgressHandler | undefined, intervalMs = 100): ProgressHandler {
  let last = 0;
  return (event) => {
    if (!handler) return;
    const now = Date.now();
    const final = event.total !== undefined && event.completed === event.total;
    if (!final && now - last < intervalMs) return;
    last = now;
    handler(event);
  };
}
