// GET /health and GET|POST /ping (SageMaker's alias): 200 with an empty body while the server is up.
// vLLM answers 503 once its engine died; here an engine that dies is restarted on the next request,
// so the server stays healthy.
import type { Context } from "hono";

export function health() {
  return function healthHandler(c: Context) {
    return c.body(null, 200);
  };
}
