// Request body size limit, answered with a 413 in the listener's error shape. Hono's bodyLimit does the
// counting: it trusts Content-Length when there is one (Bun delivers exactly that many bytes) and
// otherwise reads a chunked body only up to the limit.
import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { ApiError } from "../api-error.ts";
import { DEFAULT_BODY_LIMIT_BYTES } from "../server-options.ts";
import { errorResponse, type RenderError } from "./error-response.ts";

export interface BodyLimitOptions {
  /** Largest body accepted, in bytes. */
  maxBytes?: number;
  renderError: RenderError;
}

const BLOB_UPLOAD_PATH = "/api/blobs/";

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const opts = { maxBytes: DEFAULT_BODY_LIMIT_BYTES, ...options } satisfies Required<BodyLimitOptions>;
  if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 1) {
    throw new RangeError(`Cannot limit request bodies to ${opts.maxBytes} bytes: expected a positive integer`);
  }
  const message = `Request body is larger than the server's limit of ${formatBytes(opts.maxBytes)}`;
  const limit = honoBodyLimit({
    maxSize: opts.maxBytes,
    onError: (c) => errorResponse(c, opts.renderError, new ApiError(413, message)),
  });
  return async function bodyLimit(c, next) {
    // Blob uploads are model files (gigabytes); the store streams them to disk and checks their digest.
    if (c.req.method === "POST" && c.req.path.startsWith(BLOB_UPLOAD_PATH)) return next();
    return limit(c, next);
  };
}
