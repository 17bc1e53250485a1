// Gives each request a lease scope (src/engine/engine-leases.ts): the engines its route is handed stay
// loaded until its answer has been sent in full, a streamed one included, or the client has gone. So a
// load for another request (a reload with other options, room under the cap) waits for this one instead
// of stopping the engine between the route's steps.
import type { MiddlewareHandler } from "hono";
import { EngineLeases } from "../../engine/engine-leases.ts";
import { isStreamedAnswer, observeEnd } from "./stream-end.ts";

export function engineLeases(): MiddlewareHandler {
  return async function engineLeases(c, next) {
    const leases = new EngineLeases();
    try {
      await leases.run(next);
    } catch (error) {
      leases.end();
      throw error;
    }
    if (!leases.holding) return leases.end();
    // A client that leaves ends the scope too, whatever happens to the stream.
    c.req.raw.signal.addEventListener("abort", () => leases.end(), { once: true });
    if (isStreamedAnswer(c.res)) c.res = new Response(observeEnd(c.res.body, () => leases.end()), c.res);
    else leases.end();
  };
}
