// Anthropic's Messages API, served on every profile (Claude Code's ANTHROPIC_BASE_URL is the server's root).
import { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import { countTokens, messages } from "./messages.ts";

export function anthropicRoutes(deps: ServerDeps): Hono {
  const routes = new Hono();
  routes.post("/v1/messages", messages(deps));
  routes.post("/v1/messages/count_tokens", countTokens(deps));
  return routes;
}
