// Middleware answers its refusals itself (like Hono's own middleware) but in the listener's error
// shape, so every refusal is rendered by the same function the app's onError uses.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ApiError } from "../api-error.ts";

/** Turns an error into the body the client gets; the context lets a profile shape it by path. */
export type RenderError = (error: ApiError, c: Context) => unknown;

export function errorResponse(c: Context, renderError: RenderError, error: ApiError, headers?: Record<string, string>): Response {
  return c.json(renderError(error, c), error.status as ContentfulStatusCode, { ...error.headers, ...headers });
}
