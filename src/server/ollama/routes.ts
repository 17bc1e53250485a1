// Profile a's own endpoints (the Ollama personality): the whole native surface in one table, grouped
// as Ollama's GenerateRoutes() is. Errors here are {"error": "..."} (profiles.ts); an unknown path or
// a wrong method is answered in plain text, as Ollama's router does.
import { Hono, type Context } from "hono";
import { llamuxVersion } from "../../version.ts";
import type { ServerDeps } from "../deps.ts";
import { type Method, mountRoutes, type Route } from "../route-table.ts";
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


function routeTable(deps: ServerDeps): Route[] {
  return [
    // liveness, as scripts probe it: `curl localhost:11434` answers "Ollama is running"
    { methods: ["GET", "HEAD"], path: "/", needs: "key", handler: (c) => c.text("Ollama is running") },
    { methods: ["GET", "HEAD"], path: "/api/version", needs: "key", handler: (c) => c.json({ version: OLLAMA_COMPATIBLE_VERSION, llamux_version: llamuxVersion }) },
    // generation
    { methods: ["POST"], path: "/api/generate", needs: "chat", handler: generate(deps) },
    { methods: ["POST"], path: "/api/chat", needs: "chat", handler: chat(deps) },
    { methods: ["POST"], path: "/api/embed", needs: "embeddings", handler: embed(deps) },
    { methods: ["POST"], path: "/api/embeddings", needs: "embeddings", handler: embeddings(deps) },
    // questions answered from token probabilities (ollama-js systemone())
    { methods: ["POST"], path: "/v1/systemone", needs: "chat", handler: systemOne(deps) },
    // loaded models
    { methods: ["GET"], path: "/api/ps", needs: "key", handler: runningModels(deps) },
    // the model store: reading it needs any key, changing it the admin scope
    { methods: ["GET", "HEAD"], path: "/api/tags", needs: "key", handler: tags(deps) },
    { methods: ["POST"], path: "/api/show", needs: "key", handler: show(deps) },
    { methods: ["POST"], path: "/api/create", needs: "admin", handler: create(deps) },
    { methods: ["GET", "HEAD"], path: "/api/blobs/:digest", needs: "admin", handler: headBlob(deps) },
    { methods: ["POST"], path: "/api/blobs/:digest", needs: "admin", handler: uploadBlob(deps) },
    { methods: ["POST"], path: "/api/copy", needs: "admin", handler: copyModel(deps) },
    { methods: ["DELETE"], path: "/api/delete", needs: "admin", handler: deleteModel(deps) },
    { methods: ["POST"], path: "/api/pull", needs: "admin", handler: pull(deps) },
    { methods: ["POST"], path: "/api/push", needs: "admin", handler: push(deps) },
  ];
}

export function ollamaRoutes(deps: ServerDeps): Hono {
  return mountRoutes(new Hono(), routeTable(deps));
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
