// GET /api/tags: the models in the store, newest first, then the models named on `llamux serve` (so a
// client that lists models before choosing one finds them too).
import { statSync } from "node:fs";
import type { Context } from "hono";
import { logger } from "../../log.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { fileDigest } from "./ps.ts";
import { storedDetails } from "./model-description.ts";

const log = logger("ollama");

function entry(model: ServedModel, size: number, digest: string, modifiedAt: Date) {
  return { name: model.id, model: model.id, modified_at: modifiedAt.toISOString(), size, digest, details: storedDetails(model) };
}

export function tags(deps: ServerDeps) {
  return function tagsHandler(c: Context) {
    const models: unknown[] = [];
    for (const stored of deps.models.listStored()) {
      try {
        const model = deps.models.resolveStored(stored.name);
        if (model) models.push(entry(model, stored.size, stored.digest, stored.modifiedAt));
      } catch (error) {
        log.warn(`not listing ${stored.name}: ${(error as Error).message}`);
      }
    }
    for (const model of deps.models.list()) {
      try {
        const { size, mtime } = statSync(model.path);
        models.push(entry(model, size, fileDigest(model.path), mtime));
      } catch (error) {
        log.warn(`not listing ${model.id}: ${(error as Error).message}`);
      }
    }
    return c.json({ models });
  };
}
