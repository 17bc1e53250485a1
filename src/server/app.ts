// Builds the Hono app of one listener: the routes every profile serves (OpenAI's, Anthropic's, the web
// UI), the profile's own routes, and one error handler that renders every error in the profile's shape.
import { Hono } from "hono";
import { ApiError, toApiError } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";
import { openAiRoutes } from "./openai/routes.ts";
import { anthropicRoutes } from "./anthropic/routes.ts";
import { contextCeilingRoute } from "./context-ceiling-route.ts";
import { mountRoutes } from "./route-table.ts";
import { usageRoutes } from "./usage-routes.ts";
import { logger } from "../log.ts";
import { installMiddleware } from "./middleware/index.ts";
import { defaultServerOptions, type ServerOptions, withKeyAccess } from "./server-options.ts";
import { RequestHistory } from "./webui/request-history.ts";
import { WEB_UI_PUBLIC_PATHS, webUiRoutes } from "./webui/routes.ts";

const log = logger("http");

export function createApp(deps: ServerDeps, given: ServerOptions = defaultServerOptions): Hono {
  const options = withKeyAccess(given);
  const app = new Hono();
  const { profile } = deps;
  // Guards (host check, CORS, API key, body limit) and the request log run before every route.
  const history = new RequestHistory();
  const publicPaths = [...WEB_UI_PUBLIC_PATHS, ...profile.publicPaths];
  installMiddleware(app, { profile, options, recordRequest: (entry) => history.record(entry), publicPaths });
  app.get("/api/v1/server/context", contextCeilingRoute(deps));
  app.route("/", openAiRoutes(deps));
  app.route("/", anthropicRoutes(deps));
  app.route("/", mountRoutes(new Hono(), usageRoutes(options.keyAccess)));
  app.route("/", webUiRoutes({ deps, options, history }));
  app.route("/", profile.routes(deps, options));
  app.notFound(profile.notFound?.(deps)
    ?? ((c) => c.json(profile.errorBody(new ApiError(404, `No route for ${c.req.method} ${c.req.path}`), c.req.path) as object, 404)));
  app.onError((error, c) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) log.error(`${c.req.method} ${c.req.path}: ${apiError.message}`);
    // an unexpected error's stack, for whoever chases the 500 (debug level: it names source lines)
    if (apiError.status >= 500 && error instanceof Error && error !== apiError) log.debug(error.stack ?? error.message);
    return c.json(profile.errorBody(apiError, c.req.path) as object, apiError.status as 400, apiError.headers);
  });
  return app;
}
