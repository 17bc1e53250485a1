// Profile a's own endpoints (the Ollama personality). The native /api/* surface grows here.
import { Hono } from "hono";
import { llamuxVersion } from "../../cli/version.ts";

/** The Ollama release whose API profile a follows; clients gate features on it (0.17.1 loads lfm2moe). */
export const OLLAMA_COMPATIBLE_VERSION = "0.17.1";

export function ollamaRoutes(): Hono {
  const routes = new Hono();
  // liveness, as scripts probe it: `curl localhost:11434` answers "Ollama is running"
  routes.on(["GET", "HEAD"], "/", (c) => c.text("Ollama is running"));
  routes.get("/api/version", (c) => c.json({ version: OLLAMA_COMPATIBLE_VERSION, llamux_version: llamuxVersion }));
  return routes;
}
