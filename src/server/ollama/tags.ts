// GET /api/tags: the models in the store, newest first, then the models named on `llamux serve` (so a
// client that lists models before choosing one finds them too). Profile a's GET /v1/models lists the
// same models, as Ollama's does.
import type { Context } from "hono";
import type { ServerDeps } from "../deps.ts";
import { listedModels, type ListedModel } from "../model-listing.ts";
import { storedDetails } from "./model-description.ts";

function entry({ model, size, digest, modifiedAt }: ListedModel) {
  return { name: model.id, model: model.id, modified_at: modifiedAt.toISOString(), size, digest, details: storedDetails(model) };
}

export function tags(deps: ServerDeps) {
  return function tagsHandler(c: Context) {
    return c.json({ models: listedModels(deps).map(entry) });
  };
}
