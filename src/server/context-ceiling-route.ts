// GET /api/v1/server/context?model=NAME on every profile: the context a model has now and the most a
// request to it can get here (what the server would grow it to), for `llamux launch` to tell an agent
// when to compact. -> {model, context_length (loaded now, else null), max_context_length, bound_by
// ("trained", "memory" or "setting")}
import type { Context } from "hono";
import { badRequest } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";

export function contextCeilingRoute(deps: ServerDeps) {
  return function contextCeilingHandler(c: Context) {
    const name = c.req.query("model");
    if (!name) throw badRequest('Cannot tell a model\'s context: "model" is required', "model");
    const model = deps.models.resolve(name);
    const ceiling = deps.models.contextCeiling(model);
    const loaded = deps.models.loadedOf(model).map((l) => l.engine.info.contextPerSequence);
    return c.json({
      model: model.id,
      context_length: loaded.length ? Math.max(...loaded) : null,
      max_context_length: ceiling.tokens,
      bound_by: ceiling.boundBy,
    });
  };
}
