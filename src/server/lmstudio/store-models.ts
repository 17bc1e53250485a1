// How profile c spells stored models. The shared ModelService resolves store names
// (`hf.co/<org>/<repo>:<tag>`, `llama3.2`); LM Studio keys look like `publisher/model` and pick a
// variant with `@quant`, so those spellings are translated to store names here.
import { statSync } from "node:fs";
import type { StoredModel } from "../../store/model-store.ts";
import { HUB_HOST, tryParseModelName } from "../../store/model-name.ts";
import type { ServedModel } from "../model-service.ts";

/**
 * The store names LM Studio's `org/repo[@quant]` may mean, best first: the hub model with that tag, or
 * without one, the repository's most recently stored tag. Empty for other spellings.
 */
export function lmStudioStoreNames(name: string, stored: () => StoredModel[]): string[] {
  const at = name.lastIndexOf("@");
  const key = at > 0 ? name.slice(0, at) : name;
  const quant = at > 0 ? name.slice(at + 1) : undefined;
  if (key.split("/").length !== 2) return [];
  if (quant) return [`${HUB_HOST}/${key}:${quant}`, `${HUB_HOST}/${key}:${quant.toUpperCase()}`];
  const repo = key.toLowerCase();
  const newest = stored().find((m) => m.parsedName.host === HUB_HOST && `${m.parsedName.namespace}/${m.parsedName.model}`.toLowerCase() === repo);
  return [`${HUB_HOST}/${key}`, ...(newest ? [newest.name] : [])];
}

/** The publisher LM Studio shows: the hub organisation or registry namespace of a stored model, else the `org/` of an id. */
export function publisherOf(model: ServedModel): string {
  const parsed = model.stored && tryParseModelName(model.stored.name);
  if (parsed) return parsed.namespace;
  const slash = model.id.indexOf("/");
  return slash > 0 ? model.id.slice(0, slash) : "local";
}

/** The model's files: its weights and, for a stored vision model, its projector. */
export function modelFiles(model: ServedModel): { path: string; projectorPath?: string } {
  const projectorPath = model.stored?.projectorPath;
  return { path: model.path, ...(projectorPath ? { projectorPath } : {}) };
}

/** Size of a model's files on disk (weights and projector). */
export function modelFileBytes(model: ServedModel): number {
  const { path, projectorPath } = modelFiles(model);
  const size = (file: string | undefined) => {
    try {
      return file ? statSync(file).size : 0;
    } catch {
      return 0;
    }
  };
  return size(path) + size(projectorPath);
}
