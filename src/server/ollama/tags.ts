// GET /api/tags: the models in the store, newest first, then the models named on `llamux serve` (so a
// client that lists models before choosing one finds them too). Profile a's GET /v1/models lists the
// same models, as Ollama's does.
import { statSync } from "node:fs";
import type { Context } from "hono";
import { logger } from "../../log.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { fileDigest } from "./ps.ts";
import { storedDetails } from "./model-description.ts";

const log = logger("ollama");

/** One model of the listing, with the file facts /api/tags shows. */
export interface ListedModel {
  model: ServedModel;
  size: number;
  digest: string;
  modifiedAt: Date;
}

/** The store's models (newest first), then those named on `serve`; unreadable ones are left out with a warning. */
export function listedModels(deps: ServerDeps): ListedModel[] {
  const listed: ListedModel[] = [];
  for (const stored of deps.models.listStored()) {
    try {
      const model = deps.models.resolveStored(stored.name);
      if (model) listed.push({ model, size: stored.size, digest: stored.digest, modifiedAt: stored.modifiedAt });
    } catch (error) {
      log.warn(`not listing ${stored.name}: ${(error as Error).message}`);
    }
  }
  for (const model of deps.models.list()) {
    try {
      const { size, mtime } = statSync(model.path);
      listed.push({ model, size, digest: fileDigest(model.path), modifiedAt: mtime });
    } catch (error) {
      log.warn(`not listing ${model.id}: ${(error as Error).message}`);
    }
  }
  return listed;
}

function entry({ model, size, digest, modifiedAt }: ListedModel) {
  return { name: model.id, model: model.id, modified_at: modifiedAt.toISOString(), size, digest, details: storedDetails(model) };
}

export function tags(deps: ServerDeps) {
  return function tagsHandler(c: Context) {
    return c.json({ models: listedModels(deps).map(entry) });
  };
}
