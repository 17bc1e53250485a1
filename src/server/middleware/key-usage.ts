// Runs each request under its key (src/keys/key-request.ts), so the model service, the MCP hub and the
// engine's admission know whose work it is, and closes the key's account of the request when its answer
// is over (a streamed one when its stream ends): the token counts the route reported count then, unless
// its sequences were counted as they ended.
import type { MiddlewareHandler } from "hono";
import { isStreamedAnswer, observeEnd } from "./stream-end.ts";
import { keyRequest } from "./api-key.ts";

export function keyUsage(): MiddlewareHandler {
  return async function keyUsage(c, next) {
    const work = keyRequest(c);
    if (!work) return next();
    const finish = () => work.finish(c.get("usage"));
    try {
      await work.run(next);
    } catch (error) {
      finish();
      throw error;
    }
    if (isStreamedAnswer(c.res)) c.res = new Response(observeEnd(c.res.body, finish), c.res);
    else finish();
  };
}
