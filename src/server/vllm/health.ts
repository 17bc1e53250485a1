// GET /health and GET|POST /ping (SageMaker's alias): 200 with an empty body once the models named on
// the command line have loaded, 503 (saying why, in vLLM's error shape) before then or when one failed.
// vLLM answers 503 once its engine died; here an engine that dies is restarted on the next request, so
// the server stays healthy.
import type { Context } from "hono";
import { ApiError } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";

export function health(deps: ServerDeps) {
  return function healthHandler(c: Context) {
    const notReady = deps.readiness?.notReady();
    if (notReady) return c.json(deps.profile.errorBody(new ApiError(503, notReady), c.req.path), 503);
    return c.body(null, 200);
  };
}
