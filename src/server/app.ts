// Builds the Hono app of one listener: the profile's routes over the shared model service, and one
// error handler that renders every error in the profile's shape.
import { Hono } from "hono";
import { ApiError, toApiError } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";
import { openAiRoutes } from "./openai/routes.ts";
import { anthropicRoutes } from "./anthropic/routes.ts";
import { errorBodyFor } from "./error-body.ts";
import { vllmRoutes } from "./vllm/routes.ts";
import { ollamaNotFound, ollamaRoutes } from "./ollama/routes.ts";
import { lmStudioRoutes } from "./lmstudio/routes.ts";
import { SDK_SOCKET_PATHS } from "./lmstudio/sdk/websocket.ts";
import { logger } from "../log.ts";
import { installMiddleware } from "./middleware/index.ts";
import { defaultServerOptions, type ServerOptions } from "./server-options.ts";
import { RequestHistory } from "./webui/request-history.ts";
import { WEB_UI_PUBLIC_PATHS, webUiRoutes } from "./webui/routes.ts";

const log = logger("http");

export function createApp(deps: ServerDeps, options: ServerOptions = defaultServerOptions): Hono {
  const app = new Hono();
  // Guards (host check, CORS, API key, body limit) and the request log run before every route.
  const history = new RequestHistory();
  // LM Studio's SDK sockets carry their key in the protocol's handshake, not in a header.
  const publicPaths = [...WEB_UI_PUBLIC_PATHS, ...(deps.profile.name === "c" ? SDK_SOCKET_PATHS : [])];
  installMiddleware(app, { profile: deps.profile, options, recordRequest: (entry) => history.record(entry), publicPaths });
  app.route("/", openAiRoutes(deps));
  app.route("/", anthropicRoutes(deps));
  app.route("/", webUiRoutes({ deps, options, history }));
  if (deps.profile.name === "a") app.route("/", ollamaRoutes(deps));
  if (deps.profile.name === "b") app.route("/", vllmRoutes(deps));
  if (deps.profile.name === "c") app.route("/", lmStudioRoutes(deps, options));
  app.notFound(deps.profile.name === "a"
    ? ollamaNotFound(deps)
    : (c) => c.json(errorBodyFor(deps.profile, new ApiError(404, `No route for ${c.req.method} ${c.req.path}`), c.req.path), 404));
  app.onError((error, c) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) log.error(`${c.req.method} ${c.req.path}: ${apiError.message}`);
    return c.json(errorBodyFor(deps.profile, apiError, c.req.path), apiError.status as 400);
  });
  return app;
}
