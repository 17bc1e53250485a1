// HEAD and POST /api/blobs/:digest: whether the store has a blob, and uploading one (the body must hash
// to the digest in the path). Clients upload a GGUF this way before /api/create names it in `files`.
import type { Context } from "hono";
import { DigestMismatchError } from "../../store/model-store.ts";
import { ApiError, badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { storeOf } from "./copy-delete.ts";

const DIGEST = /^sha256[:-][0-9a-fA-F]{64}$/;

function digestParam(c: Context): string {
  const digest = c.req.param("digest") ?? "";
  if (!DIGEST.test(digest)) throw badRequest(`invalid digest format "${digest}": expected sha256:<64 hex characters>`);
  return `sha256:${digest.slice(7).toLowerCase()}`;
}

export function headBlob(deps: ServerDeps) {
  // Hono answers HEAD through the GET route; a real GET is not part of Ollama's API.
  return function headBlobHandler(c: Context) {
    if (c.req.method !== "HEAD") return c.text("405 method not allowed", 405);
    const digest = digestParam(c);
    if (!storeOf(deps).hasBlob(digest)) throw new ApiError(404, `blob "${c.req.param("digest")}" not found`);
    return c.body(null, 200);
  };
}

export function uploadBlob(deps: ServerDeps) {
  return async function uploadBlobHandler(c: Context) {
    const digest = digestParam(c);
    const store = storeOf(deps);
    if (store.hasBlob(digest)) {
      await c.req.raw.body?.cancel();
      return c.body(null, 200);
    }
    const body = c.req.raw.body;
    try {
      await store.importBlob(body ?? new Uint8Array(), { expectedDigest: digest });
    } catch (error) {
      if (error instanceof DigestMismatchError) throw badRequest(`digest mismatch, expected "${digest}", got "${error.actual}"`);
      throw error;
    }
    return c.body(null, 201);
  };
}
