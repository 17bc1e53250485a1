// Puts content into the store's blobs directory under its sha256. Content is hashed while it is
// written to a temporary file, which is fsynced and renamed into place only when its digest is right,
// so a blob file is always complete; two writers of the same content each rename a full copy.
import { createHash } from "node:crypto";
import { chmodSync, createReadStream, existsSync, mkdirSync } from "node:fs";
import { copyFile, open, rm } from "node:fs/promises";
import { removeAbandonedTempFiles, renameDurably, tempPathIn } from "./atomic-file.ts";

export type BlobSource = string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface ImportBlobOptions {
  /** `sha256:<hex>` the content must have; a mismatch throws DigestMismatchError and stores nothing. */
  expectedDigest?: string;
  /** For a path: rename the file into the store instead of copying it (it is gone afterwards). */
  move?: boolean;
}

export interface ImportedBlob {
  digest: string;
  size: number;
}

export class DigestMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`digest mismatch, expected "${expected}", got "${actual}"`);
    this.name = "DigestMismatchError";
  }
}

/** A write error with the reason said plainly (a full disk is the common one). */
export function describeWriteError(error: unknown, what: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOSPC") return new Error(`Cannot write ${what}: no space left on the device`, { cause: error });
  if (code === "EDQUOT") return new Error(`Cannot write ${what}: disk quota exceeded`, { cause: error });
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") return new Error(`Cannot write ${what}: permission denied`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

/** A file's digest (`sha256:<hex>`) and size, read in 1 MiB chunks. */
export async function hashFile(path: string): Promise<ImportedBlob> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).byteLength;
  }
  return { digest: `sha256:${hash.digest("hex")}`, size };
}

function chunksOf(source: Exclude<BlobSource, string>): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  if (source instanceof Uint8Array) return [source];
  return source as AsyncIterable<Uint8Array>;
}

/** Writes the chunks to `temp` (fsynced) and returns their digest and size. */
async function writeHashed(temp: string, chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<ImportedBlob> {
  const hash = createHash("sha256");
  let size = 0;
  const handle = await open(temp, "w", 0o644);
  try {
    for await (const chunk of chunks) {
      hash.update(chunk);
      let done = 0;
      while (done < chunk.byteLength) done += (await handle.write(chunk, done, chunk.byteLength - done)).bytesWritten;
      size += chunk.byteLength;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { digest: `sha256:${hash.digest("hex")}`, size };
}

/**
 * Stores `source` in `blobsDir` as the file `blobPath(digest)` names. Same content twice is one blob.
 * `blobPath` maps a `sha256:<hex>` digest to its file.
 */
export async function writeBlob(blobsDir: string, blobPath: (digest: string) => string, source: BlobSource, options: ImportBlobOptions = {}): Promise<ImportedBlob> {
  mkdirSync(blobsDir, { recursive: true });
  removeAbandonedTempFiles(blobsDir);
  const check = (blob: ImportedBlob) => {
    if (options.expectedDigest !== undefined && blob.digest !== options.expectedDigest.replace("-", ":").toLowerCase()) {
      throw new DigestMismatchError(options.expectedDigest, blob.digest);
    }
  };

  if (typeof source === "string" && options.move) {
    const blob = await hashFile(source);
    check(blob);
    const target = blobPath(blob.digest);
    if (existsSync(target)) await rm(source, { force: true });
    else {
      const handle = await open(source, "r");
      await handle.sync().finally(() => handle.close());
      await renameDurably(source, target).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "EXDEV") throw error;
        await copyIntoPlace(blobsDir, source, target);
        await rm(source, { force: true });
      });
      chmodSync(target, 0o644);
    }
    return blob;
  }

  const temp = tempPathIn(blobsDir);
  try {
    const chunks = typeof source === "string" ? createReadStream(source, { highWaterMark: 1 << 20 }) : chunksOf(source);
    const blob = await writeHashed(temp, chunks as AsyncIterable<Uint8Array>);
    check(blob);
    const target = blobPath(blob.digest);
    if (existsSync(target)) await rm(temp, { force: true });
    else await renameDurably(temp, target);
    return blob;
  } catch (error) {
    await rm(temp, { force: true });
    throw error instanceof DigestMismatchError ? error : describeWriteError(error, "blob");
  }
}

/** Copies `source` to `target` through a temporary file in the same directory (for moves across devices). */
async function copyIntoPlace(dir: string, source: string, target: string): Promise<void> {
  const temp = tempPathIn(dir);
  try {
    await copyFile(source, temp);
    const handle = await open(temp, "r");
    await handle.sync().finally(() => handle.close());
    await renameDurably(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw describeWriteError(error, "blob");
  }
}
