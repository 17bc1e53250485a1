// One row per endpoint, as every dialect's routes.ts lists them: the methods, the path, what the route
// needs of the caller's key (a scope, or any valid key), and the handler. The table is the one place that
// says what a route needs: mounting a row puts its guard in front of its handler.
import type { Handler, Hono, MiddlewareHandler } from "hono";
import type { RouteNeed } from "../keys/key-scopes.ts";
import { keyRequest } from "./middleware/api-key.ts";

export type Method = "GET" | "HEAD" | "POST" | "DELETE";

export interface Route {
  methods: Method[];
  path: string;
  /** The scope the caller's key needs, or "key" for any valid key (no keys on the server: no check). */
  needs: RouteNeed;
  handler: Handler;
}

/** Admits a request to the route under its key: a missing scope is a 403, a reached limit a 429. */
export function routeGuard(needs: RouteNeed, what: string): MiddlewareHandler {
  return async function routeGuard(c, next) {
    keyRequest(c)?.admit(needs, what);
    await next();
  };
}

/** Registers every row, each behind its guard. */
export function mountRoutes(app: Hono, routes: Route[]): Hono {
  for (const route of routes) {
    app.on(route.methods, route.path, routeGuard(route.needs, `call ${route.methods.join("/")} ${route.path}`), route.handler);
  }
  return app;
}
