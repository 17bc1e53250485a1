// Anthropic's Messages API, served on every profile (Claude Code's ANTHROPIC_BASE_URL is the server's root).
import { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import { mountRoutes } from "../route-table.ts";
import { countTokens, messages } from "./messages.ts";

export function anthropicRoutes(deps: ServerDeps): Hono {
  return mountRoutes(new Hono(), [
    { methods: ["POST"], path: "/v1/messages", needs: "chat", handler: messages(deps) },
    { methods: ["POST"], path: "/v1/messages/count_tokens", needs: "chat", handler: countTokens(deps) },
  ]);
}
