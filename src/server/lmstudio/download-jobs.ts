// Downloads started over /api/v1/models/download run here, in the background: a job outlives the
// request that started it, and its progress (bytes, total, speed) is read back by job id. Each job
// is one pull into the store (src/store/pull.ts). A job belongs to the API keys that asked for it
// (keyOwner): another key's job id reads as unknown, as a stored response's does.
import { randomBytes } from "node:crypto";
import type { ModelStore } from "../../store/model-store.ts";
import { pullModel, type PullOptions } from "../../store/pull.ts";
import type { PullProgress } from "../../store/pull-progress.ts";
import { logger } from "../../log.ts";

const log = logger("download");

/** LM Studio also has "paused" (never reached here) and "already_downloaded" (answered without a job). */
export type DownloadStatus = "downloading" | "completed" | "failed";

export interface DownloadJob {
  id: string;
  /** The store name being pulled (`hf.co/org/repo:Q4_K_M`). */
  name: string;
  status: DownloadStatus;
  startedAt: Date;
  completedAt?: Date;
  /** The name the model was stored under, once completed. */
  storedName?: string;
  error?: string;
  /** Per blob digest: its size and the bytes written so far. */
  blobs: Map<string, { total: number; completed: number }>;
  /** When the first byte arrived (ms since the epoch), for the average speed. */
  firstByteAt?: number;
  /** Resolves when the job has a total size to report, or has ended. */
  sized: Promise<void>;
  /** The key owners that started it, or joined it by asking for the same name while it ran. */
  owners: Set<string>;
}

export function downloadedBytes(job: DownloadJob): number {
  let sum = 0;
  for (const blob of job.blobs.values()) sum += blob.completed;
  return sum;
}

export function totalBytes(job: DownloadJob): number {
  let sum = 0;
  for (const blob of job.blobs.values()) sum += blob.total;
  return sum;
}

/** Average bytes per second since the first byte arrived. */
export function bytesPerSecond(job: DownloadJob, now = Date.now()): number {
  if (job.firstByteAt === undefined) return 0;
  const seconds = (now - job.firstByteAt) / 1000;
  return seconds > 0 ? downloadedBytes(job) / seconds : 0;
}

/** Finished jobs kept for status reads before the oldest is forgotten. */
const KEPT_FINISHED_JOBS = 100;

export class DownloadJobs {
  private readonly jobs = new Map<string, DownloadJob>();

  constructor(private readonly store: ModelStore, private readonly pullOptions: PullOptions = {}) {}

  /** The job `owner` may read, or undefined for an unknown id (or another owner's). */
  get(id: string, owner: string): DownloadJob | undefined {
    const job = this.jobs.get(id);
    return job?.owners.has(owner) ? job : undefined;
  }

  /**
   * Starts pulling `name` in the background for `owner`; a pull of the same name already running is
   * that job, which `owner` then shares.
   */
  start(name: string, owner: string): DownloadJob {
    const running = [...this.jobs.values()].find((job) => job.name === name && job.status === "downloading");
    if (running) {
      running.owners.add(owner);
      return running;
    }
    let markSized!: () => void;
    const job: DownloadJob = {
      id: newJobId(), name, status: "downloading", startedAt: new Date(), blobs: new Map(), sized: new Promise((resolve) => (markSized = resolve)),
      owners: new Set([owner]),
    };
    this.forgetOldFinished();
    this.jobs.set(job.id, job);
    const onProgress = (event: PullProgress) => {
      if (event.digest === undefined || event.total === undefined) return;
      const completed = event.completed ?? 0;
      if (completed > 0 && job.firstByteAt === undefined) job.firstByteAt = Date.now();
      job.blobs.set(event.digest, { total: event.total, completed });
      markSized();
    };
    log.info(`job ${job.id}: downloading "${name}"`);
    pullModel(this.store, name, { ...this.pullOptions, onProgress })
      .then((storedName) => {
        job.status = "completed";
        job.storedName = storedName;
        log.info(`job ${job.id}: "${storedName}" downloaded`);
      })
      .catch((error: Error) => {
        job.status = "failed";
        job.error = error.message;
        log.warn(`job ${job.id}: ${error.message}`);
      })
      .finally(() => {
        job.completedAt = new Date();
        markSized();
      });
    return job;
  }

  private forgetOldFinished(): void {
    const finished = [...this.jobs.values()].filter((job) => job.status !== "downloading");
    for (const job of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED_JOBS + 1))) this.jobs.delete(job.id);
  }
}

/** `job_` and 10 hex characters, as LM Studio's ids look. */
function newJobId(): string {
  return `job_${randomBytes(5).toString("hex")}`;
}
