// The last requests a listener answered, for the web UI's live request log. A ring buffer: entries get
// increasing ids so a poller asks only for what it has not seen. Each key owner reads only its own
// requests (with several --api-keys, one key's paths, job ids and token counts are not another's).
import type { RequestLogEntry } from "../middleware/request-log.ts";

export interface RecordedRequest extends RequestLogEntry {
  id: number;
  /** Unix milliseconds when the request ended (for a stream: when the stream ended). */
  at: number;
}

export class RequestHistory {
  private readonly entries: RecordedRequest[] = [];
  private nextId = 1;

  constructor(private readonly capacity = 200) {}

  record(entry: RequestLogEntry): void {
    // The UI's own page loads and polling would drown the requests it is there to show.
    if (entry.path.startsWith("/ui") || entry.path.startsWith("/api/v1/server/")) return;
    this.entries.push({ ...entry, id: this.nextId++, at: Date.now() });
    if (this.entries.length > this.capacity) this.entries.shift();
  }

  /** The entries of `owner` (keyOwner) with an id above `afterId`, oldest first. */
  since(owner: string, afterId = 0): RecordedRequest[] {
    return this.entries.filter((entry) => entry.id > afterId && entry.owner === owner);
  }
}
