// POST /api/embeddings: Ollama's legacy route. One prompt, one vector, not normalised.
import type { Context } from "hono";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { findModel, keepAliveOf } from "./model-request.ts";
import { loadOverrides } from "./options.ts";
import { embeddingsSchema } from "./schemas.ts";

export function embeddings(deps: ServerDeps) {
  return async function embeddingsHandler(c: Context) {
    const body = validate(embeddingsSchema, await readJsonBody(c));
    const model = findModel(deps, body.model ?? "", "pull-hint");
    // As Ollama: an empty prompt loads the model whatever it is; a generative one cannot embed. (Ollama's
    // legacy route wraps that refusal in a 500; llamux keeps the runner's 501, since the server is fine.)
    const embeds = deps.models.embeds(model);
    if (!embeds && body.prompt) throw deps.profile.notAnEmbeddingModel(model.id);
    const engine = await deps.models.engine(model, embeds ? {} : loadOverrides(model, body.options), keepAliveOf(deps, model, body.keep_alive));
    if (!body.prompt) return c.json({ embedding: [] });
    const result = await engine.embed(body.prompt, { truncate: true });
    c.set("usage", { promptTokens: result.tokens, completionTokens: 0 });
    // The engine normalises; this route gives the pooled vector as the model made it.
    return c.json({ embedding: result.embedding.map((v) => v * result.norm) });
  };
}
