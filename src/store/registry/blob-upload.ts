// Uploads one blob to a registry as Ollama's push does (server/upload.go):
//   HEAD  /v2/<ns>/<model>/blobs/<digest>      there already (any answer below 400): nothing to send
//   POST  /v2/<ns>/<model>/blobs/uploads/      (?mount=<digest>&from=<ns>/<model> of a layer's `from`);
//                                              201: mounted from the other repository; else the upload's URL
//   PATCH <upload URL>                         each part in turn (Content-Range a-b, X-Redirect-Uploads: 1);
//                                              the answer's Location is the next part's URL, or a 307 sends the
//                                              part with a monolithic PUT to the redirect (no registry token)
//   PUT   <upload URL>?digest=<d>&etag=<md5>-<parts>   commits the upload (the md5 of the parts' md5s)
// Parts are a 16th of the blob, at least 100 MB and at most 1 GB, so most blobs go in one part.
import { createHash, type Hash } from "node:crypto";
import type { ManifestLayer } from "../manifest.ts";
import { tryParseModelName } from "../model-name.ts";
import { type ProgressHandler, throttledProgress } from "../pull-progress.ts";
import { RegistryError, type RegistrySession, uploadLocation } from "./registry-session.ts";

export interface PartSizes {
  parts: number;
  min: number;
  max: number;
}

export const OLLAMA_PART_SIZES: PartSizes = { parts: 16, min: 100_000_000, max: 1_000_000_000 };
/** Tries of one part (a dropped connection or a 5xx answer), as Ollama's maxRetries. */
const PART_TRIES = 6;

export interface BlobToUpload {
  layer: ManifestLayer;
  path: string;
  /** `https://host/v2/<ns>/<model>` */
  repository: string;
  onProgress?: ProgressHandler;
  partSizes?: PartSizes;
}

/** `pushing 3c168af1dea0`: the status Ollama shows for a blob being pushed. */
export function pushingStatus(digest: string): string {
  return `pushing ${digest.replace(/^sha256[:-]/, "").slice(0, 12)}`;
}

export function splitParts(total: number, sizes: PartSizes = OLLAMA_PART_SIZES): Array<{ offset: number; size: number }> {
  const size = Math.min(sizes.max, Math.max(sizes.min, Math.floor(total / sizes.parts)));
  const parts = [];
  for (let offset = 0; offset < total; offset += size) parts.push({ offset, size: Math.min(size, total - offset) });
  return parts;
}

/** Bytes of the part sent so far, counted into the blob's progress; taken back when the part is sent again. */
class PartProgress {
  private sent = 0;
  constructor(private readonly onBytes: (n: number) => void) {}
  add(n: number): void {
    this.sent += n;
    this.onBytes(n);
  }
  rollback(): void {
    this.onBytes(-this.sent);
    this.sent = 0;
  }
}

/** The part's bytes as a request body, counted into `progress` and `md5` as they are read. */
function partBody(path: string, part: { offset: number; size: number }, md5: Hash, progress: PartProgress): ReadableStream<Uint8Array> {
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      md5.update(chunk);
      progress.add(chunk.byteLength);
      controller.enqueue(chunk);
    },
  });
  return Bun.file(path).slice(part.offset, part.offset + part.size).stream().pipeThrough(counter);
}

function isTransient(error: unknown): boolean {
  if (error instanceof RegistryError) return error.status >= 500 || error.status === 429;
  return !(error instanceof Error && error.name === "AbortError");
}

export async function uploadBlob(session: RegistrySession, upload: BlobToUpload): Promise<void> {
  const { layer, repository } = upload;
  let completed = 0;
  const progress = throttledProgress(upload.onProgress);
  const report = () => progress({ status: pushingStatus(layer.digest), digest: layer.digest, total: layer.size, completed });
  const head = await session.send("HEAD", `${repository}/blobs/${layer.digest}`);
  await head.body?.cancel();
  if (head.status < 400) {
    completed = layer.size;
    return report();
  }
  if (head.status !== 404) throw new RegistryError(head.status, `${head.status}: ${head.statusText}`, "");

  const start = new URL(`${repository}/blobs/uploads/`);
  const from = layer.from ? tryParseModelName(layer.from) : undefined;
  if (from) {
    start.searchParams.append("mount", layer.digest);
    start.searchParams.append("from", `${from.namespace}/${from.model}`);
  }
  const started = await session.expect("POST", start.toString());
  await started.body?.cancel();
  if (started.status === 201) {
    completed = layer.size;
    return report();
  }
  let next = uploadLocation(started, start.toString());
  if (!next) throw new Error(`the registry started an upload of ${layer.digest} without saying where to send it`);
  report();

  const partHashes: Buffer[] = [];
  for (const part of splitParts(layer.size, upload.partSizes)) {
    const progress = new PartProgress((n) => {
      completed += n;
      report();
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const sent = await sendPart(session, next, upload.path, part, progress);
        next = sent.next;
        partHashes.push(sent.md5);
        break;
      } catch (error) {
        progress.rollback();
        if (attempt >= PART_TRIES || !isTransient(error)) throw error;
        await Bun.sleep(250 * 2 ** attempt);
      }
    }
  }
  const commit = new URL(next);
  commit.searchParams.append("digest", layer.digest);
  commit.searchParams.append("etag", `${createHash("md5").update(Buffer.concat(partHashes)).digest("hex")}-${partHashes.length}`);
  await session.expect("PUT", commit.toString(), { headers: { "Content-Type": "application/octet-stream", "Content-Length": "0" } });
  report();
}

/** PATCHes one part (or PUTs it where the registry redirects); returns where the upload goes on, and the part's md5. */
async function sendPart(
  session: RegistrySession, url: string, path: string, part: { offset: number; size: number }, progress: PartProgress,
): Promise<{ next: string; md5: Buffer }> {
  const headers = { "Content-Type": "application/octet-stream", "Content-Length": String(part.size) };
  let md5 = createHash("md5");
  const response = await session.expect("PATCH", url, {
    headers: { ...headers, "X-Redirect-Uploads": "1", "Content-Range": `${part.offset}-${part.offset + part.size - 1}` },
    // Each attempt (a 401 brings a second) counts and hashes the part afresh.
    body: () => {
      progress.rollback();
      md5 = createHash("md5");
      return partBody(path, part, md5, progress);
    },
  });
  await response.body?.cancel();
  const next = uploadLocation(response, url);
  if (response.status === 307) {
    // The part itself goes to the redirect (a storage service) without the registry's token; what the
    // PATCH sent was not kept, so its bytes leave the progress.
    progress.rollback();
    const redirect = response.headers.get("location");
    if (!redirect) throw new Error("the registry redirected a part upload without a Location");
    md5 = createHash("md5");
    const put = await fetch(new URL(redirect, url).toString(), { method: "PUT", headers, body: partBody(path, part, md5, progress), redirect: "manual" });
    if (put.status >= 400) throw new RegistryError(put.status, `${put.status}: ${(await put.text().catch(() => "")).trim()}`, "");
  }
  if (!next) throw new Error("the registry took a part without saying where the upload goes on");
  return { next, md5: md5.digest() };
}
