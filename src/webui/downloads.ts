// Background downloads the page started: their job ids live in localStorage, so after a reload the page
// finds them again and goes on polling the server's job status until each one ends.
import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api.ts";
import type { DownloadStatus } from "./types.ts";

const STORAGE = "llamux.downloads";
const POLL_MS = 500;

export interface TrackedDownload {
  jobId: string;
  label: string;
  status?: DownloadStatus;
  error?: string;
}

const finished = (status: DownloadStatus | undefined) => status !== undefined && ["completed", "failed", "already_downloaded"].includes(status.status);

function readStored(): TrackedDownload[] {
  try {
    return JSON.parse(localStorage.getItem(STORAGE) ?? "[]") as TrackedDownload[];
  } catch {
    return [];
  }
}

export function downloadProgress(download: TrackedDownload): number {
  const s = download.status;
  if (!s) return 0;
  if (s.status === "completed" || s.status === "already_downloaded") return 1;
  const total = s.total_size_bytes ?? 0;
  // All bytes in is not done yet: the server still checks the sha256 and writes the manifest.
  return total > 0 ? Math.min(0.99, (s.downloaded_bytes ?? 0) / total) : 0;
}

export function downloadError(download: TrackedDownload): string | undefined {
  const error = download.status?.error;
  return download.error ?? (typeof error === "string" ? error : error?.message ?? (download.status?.status === "failed" ? "Download failed" : undefined));
}

/** The tracked downloads, polled while any is running; `onFinished` runs when one completes. */
export function useDownloads(onFinished: () => void): { downloads: TrackedDownload[]; track: (jobId: string, label: string) => void; dismiss: (jobId: string) => void } {
  const [downloads, setDownloads] = useState<TrackedDownload[]>(readStored);

  useEffect(() => {
    localStorage.setItem(STORAGE, JSON.stringify(downloads));
  }, [downloads]);

  const running = downloads.filter((d) => !finished(d.status) && !d.error);
  useEffect(() => {
    if (running.length === 0) return;
    const timer = setTimeout(async () => {
      const updates = await Promise.all(running.map(async (d) => {
        try {
          return { jobId: d.jobId, status: await getJson<DownloadStatus>(`/api/v1/models/download/status/${encodeURIComponent(d.jobId)}`) };
        } catch (e) {
          return { jobId: d.jobId, error: (e as Error).message };
        }
      }));
      if (updates.some((u) => u.status && finished(u.status))) onFinished();
      setDownloads((all) => all.map((d) => {
        const update = updates.find((u) => u.jobId === d.jobId);
        return update ? { ...d, ...(update.status ? { status: update.status } : {}), ...(update.error ? { error: update.error } : {}) } : d;
      }));
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [downloads]);

  return {
    downloads,
    track: (jobId, label) => setDownloads((all) => [{ jobId, label }, ...all.filter((d) => d.jobId !== jobId)]),
    dismiss: (jobId) => setDownloads((all) => all.filter((d) => d.jobId !== jobId)),
  };
}
