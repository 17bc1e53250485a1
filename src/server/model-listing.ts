// The models a store-backed listing shows (Ollama's /api/tags, and profile a's /v1/models): the store's
// models, newest first, then those named on `llamux serve`, each with the file facts a listing shows.
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { logger } from "../log.ts";
import type { ServerDeps } from "./deps.ts";
import type { ServedModel } from "./model-service.ts";

const log = logger("models");

/** One model of the listing. */
export interface ListedModel {
  model: ServedModel;
  size: number;
  digest: string;
  modifiedAt: Date;
}

/** Stands in for a manifest digest where a model is a plain file: stable per file. */
export function fileDigest(path: string): string {
  return createHash("sha256").update(path).digest("hex");
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
