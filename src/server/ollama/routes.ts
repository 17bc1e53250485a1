// Profile a's own endpoints (the Ollama personality): the whole native surface in one table, grouped
// as Ollama's GenerateRoutes() is. Errors here are {"error": "..."} (profiles.ts); an unknown path or
// a wrong method is answered in plain text, as Ollama's router does.
import { Hono, type Context, type Handler } from "hono";
import { llamuxVersion } from "../../version.ts";
import type { ServerDeps } from "../deps.ts";
import { chat } from "./chat.ts";
import { embed } from "./embed.ts";
import { embeddings } from "./embeddings.ts";
import { generate } from "./generate.ts";
import { runningModels } from "./ps.ts";
import { headBlob, uploadBlob } from "./blobs.ts";
import { copyModel, deleteModel } from "./copy-delete.ts";
import { create } from "./create.ts";
import { pull } from "./pull.ts";
import { push } from "./push.ts";
import { show } from "./show.ts";
import { tags } from "./tags.ts";
import { systemOne } from "./systemone/systemone.ts";

/** The Ollama release whose API profile a follows; clients gate features on it (0.17.1 loads lfm2moe). */
export const OLLAMA_COMPATIBLE_VERSION = "0.17.1";

type Method = "GET" | "HEAD" | "POST" | "DELETE";

interface Route {
  methods: Method[];
  path: string;
  handler: Handler;
}

function routeTable(deps: ServerDeps): Route[] {
  return [
    // liveness, as scripts probe it: `curl localhost:11434` answers "Ollama is running"
    { methods: ["GET", "HEAD"], path: "/", handler: (c) => c.text("Ollama is running") },
    { methods: ["GET", "HEAD"], path: "/api/version", handler: (c) => c.json({ version: OLLAMA_COMPATIBLE_VERSION, llamux_version: llamuxVersion }) },
    // generation
    { methods: ["POST"], path: "/api/generate", handler: generate(deps) },
    { methods: ["POST"], path: "/api/chat", handler: chat(deps) },
    { methods: ["POST"], path: "/api/embed", handler: embed(deps) },
    { methods: ["POST"], path: "/api/embeddings", handler: embeddings(deps) },
    // questions answered from token probabilities (ollama-js systemone())
    { methods: ["POST"], path: "/v1/systemone", handler: systemOne(deps) },
    // loaded models
    { methods: ["GET"], path: "/api/ps", handler: runningModels(deps) },
    // the model store
    { methods: ["GET", "HEAD"], path: "/api/tags", handler: tags(deps) },
    { methods: ["POST"], path: "/api/show", handler: show(deps) },
    { methods: ["POST"], path: "/api/create", handler: create(deps) },
    { methods: ["GET", "HEAD"], path: "/api/blobs/:digest", handler: headBlob(deps) },
    { methods: ["POST"], path: "/api/blobs/:digest", handler: uploadBlob(deps) },
    { methods: ["POST"], path: "/api/copy", handler: copyModel(deps) },
    { methods: ["DELETE"], path: "/api/delete", handler: deleteModel(deps) },
    { methods: ["POST"], path: "/api/pull", handler: pull(deps) },
    { methods: ["POST"], path: "/api/push", handler: push(deps) },
  ];
}

export function ollamaRoutes(deps: ServerDeps): Hono {
  const routes = new Hono();
  for (const route of routeTable(deps)) routes.on(route.methods, route.path, route.handler);
  return routes;
}

/** Ollama's router answers unknown paths and wrong methods in plain text, not JSON. */
export function ollamaNotFound(deps: ServerDeps) {
  const methodsByPath = new Map(routeTable(deps).map((route) => [route.path, route.methods]));
  return function ollamaNotFoundHandler(c: Context): Response {
    const methods = methodsByPath.get(c.req.path);
    if (methods && !methods.includes(c.req.method as Method)) return c.text("405 method not allowed", 405);
    return c.text("404 page not found", 404);
  };
}
