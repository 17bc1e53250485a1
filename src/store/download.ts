// Downloads one blob into the store: into `sha256-<hex>-partial` (Ollama's name), resuming from what an
// earlier attempt or pull left there with an HTTP range request, then checks the sha256 and renames the
// file into place. A lock file beside the partial file keeps two processes from writing it at once. A
// server that sends more than the declared size, or content with another digest, leaves no partial file.
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { open, rm, truncate } from "node:fs/promises";
import { renameDurably } from "./atomic-file.ts";
import { DigestMismatchError, describeWriteError } from "./blob-writer.ts";
import { BodyTooLargeError, HttpStatusError, RedirectRefusedError, fetchFollowingRedirects } from "./http.ts";
import { digestHex } from "./manifest.ts";
import type { ModelStore } from "./model-store.ts";
import { type ProgressHandler, pullingStatus, throttledProgress } from "./pull-progress.ts";

export interface BlobDownload {
  url: string;
  /** `sha256:<hex>` the content must have */
  digest: string;
  /** expected size, when the source said it */
  size?: number;
  /** sent only to the URL's own host */
  credentials?: Record<string, string>;
  /** what the file is, for messages ("Llama-Q4_K_M.gguf") */
  label: string;
  onProgress?: ProgressHandler;
  signal?: AbortSignal;
  /** attempts after the first when the connection drops or the server fails (default 5) */
  retries?: number;
  /** to connect, for the headers, and between bytes of the body, before the attempt fails (default: LLAMUX_PULL_TIMEOUT, 30 s) */
  timeoutMs?: number;
}

const LOCK_POLL_MS = 200;

function isRetryable(error: unknown): boolean {
  if (error instanceof HttpStatusError) return error.status >= 500 || error.status === 408 || error.status === 429;
  if (error instanceof DigestMismatchError || error instanceof BodyTooLargeError || error instanceof RedirectRefusedError) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return !(code === "ENOSPC" || code === "EDQUOT" || code === "EACCES" || code === "EROFS" || (error as Error).name === "AbortError");
}

async function hashExisting(path: string, hash: Hash): Promise<number> {
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).byteLength;
  }
  return size;
}

/** Takes the lock file, waiting while a live process holds it; returns false when the blob appeared meanwhile. */
async function acquireLock(lock: string, blob: string, signal?: AbortSignal): Promise<boolean> {
  for (;;) {
    if (existsSync(blob)) return false;
    try {
      writeFileSync(lock, String(process.pid), { flag: "wx" });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw describeWriteError(error, "download lock");
    }
    const holder = Number(readFileSync(lock, "utf8").trim() || "0");
    let alive = holder > 0 && holder !== process.pid;
    try {
      if (alive) process.kill(holder, 0);
    } catch {
      alive = false;
    }
    if (!alive) rmLockIfOwnedBy(lock, holder);
    else await Bun.sleep(LOCK_POLL_MS);
    signal?.throwIfAborted();
  }
}

function rmLockIfOwnedBy(lock: string, pid: number): void {
  try {
    if (Number(readFileSync(lock, "utf8").trim() || "0") === pid) unlinkSync(lock);
  } catch {
    // already gone
  }
}

const inFlight = new Map<string, Promise<void>>();

/** Downloads the blob unless the store has it. Concurrent calls for one digest in a process share the download. */
export async function downloadBlob(store: ModelStore, download: BlobDownload): Promise<void> {
  const hex = digestHex(download.digest);
  const status = pullingStatus(hex);
  if (store.hasBlob(download.digest)) {
    const size = statSync(store.blobPath(download.digest)).size;
    download.onProgress?.({ status, digest: `sha256:${hex}`, total: size, completed: size });
    return;
  }
  const key = `${store.root}\0${hex}`;
  let pending = inFlight.get(key);
  if (!pending) {
    pending = downloadLocked(store, download).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  await pending;
  // also for callers that waited on another caller's or another process's download
  const size = statSync(store.blobPath(download.digest)).size;
  download.onProgress?.({ status, digest: `sha256:${hex}`, total: size, completed: size });
}

async function downloadLocked(store: ModelStore, download: BlobDownload): Promise<void> {
  mkdirSync(store.blobsDir, { recursive: true });
  const blob = store.blobPath(download.digest);
  const partial = `${blob}-partial`;
  const lock = `${partial}.lock`;
  if (!(await acquireLock(lock, blob, download.signal))) return;
  try {
    await fetchIntoPartial(download, partial);
    await renameDurably(partial, blob);
  } finally {
    rmLockIfOwnedBy(lock, process.pid);
  }
}

async function fetchIntoPartial(download: BlobDownload, partial: string): Promise<void> {
  const expected = `sha256:${digestHex(download.digest)}`;
  const progress = throttledProgress(download.onProgress);
  const status = pullingStatus(expected);
  let hash = createHash("sha256");
  let done = existsSync(partial) ? await hashExisting(partial, hash) : 0;
  let total = download.size;
  if (total !== undefined && done > total) {
    await truncate(partial, 0);
    hash = createHash("sha256");
    done = 0;
  }
  const retries = download.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    if (total !== undefined && done === total) break;
    try {
      const { response } = await fetchFollowingRedirects(download.url, {
        headers: done > 0 ? { Range: `bytes=${done}-` } : {},
        ...(download.credentials ? { credentials: download.credentials } : {}),
        ...(download.signal ? { signal: download.signal } : {}),
        ...(download.timeoutMs !== undefined ? { timeoutMs: download.timeoutMs } : {}),
        allow: [416],
      });
      if (response.status === 416) {
        await response.body?.cancel();
        throw new Error(`the server refused to resume at byte ${done}`);
      }
      if (response.status !== 206 && done > 0) {
        // the server sent the whole file again: start over
        await truncate(partial, 0);
        hash = createHash("sha256");
        done = 0;
      }
      const length = Number(response.headers.get("content-length") ?? NaN);
      if (total === undefined && Number.isFinite(length)) total = done + length;
      const tooLarge = () => new BodyTooLargeError(`the server sent more than the ${total} bytes declared for ${download.label}`);
      if (total !== undefined && done + length > total) {
        await response.body?.cancel();
        throw tooLarge();
      }
      const handle = await open(partial, "a");
      try {
        // a body past the declared size is refused as it arrives: the disk gets the declared bytes at most
        for await (const chunk of response.body ?? []) {
          if (total !== undefined && done + chunk.byteLength > total) throw tooLarge();
          try {
            await handle.write(chunk);
          } catch (error) {
            throw describeWriteError(error, `"${partial}"`);
          }
          hash.update(chunk);
          done += chunk.byteLength;
          progress({ status, digest: expected, total: total ?? done, completed: done });
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (total === undefined || done === total) break;
      throw new Error(`the connection closed after ${done} of ${total} bytes`);
    } catch (error) {
      if (error instanceof BodyTooLargeError) await rm(partial, { force: true });
      if (attempt >= retries || !isRetryable(error) || download.signal?.aborted) {
        throw interrupted(download, error, done, total);
      }
      await Bun.sleep(Math.min(5000, 250 * 2 ** attempt));
    }
  }
  const actual = `sha256:${hash.digest("hex")}`;
  if (actual !== expected) {
    await rm(partial, { force: true });
    throw new DigestMismatchError(expected, actual);
  }
}

function interrupted(download: BlobDownload, error: unknown, done: number, total: number | undefined): Error {
  if (error instanceof BodyTooLargeError) return new Error(`Download of ${download.label} failed: ${error.message}; nothing of it was kept`, { cause: error });
  if (error instanceof HttpStatusError || error instanceof RedirectRefusedError || (error as Error).message?.startsWith("Cannot write")) return error as Error;
  const of = total !== undefined ? ` of ${total}` : "";
  const reason = (error as Error).message ?? String(error);
  return new Error(`Download of ${download.label} was interrupted after ${done}${of} bytes (${reason}); pull again to resume`, { cause: error });
}
