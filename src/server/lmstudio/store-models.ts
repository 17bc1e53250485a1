// The store's models as profile c names them. LM Studio keys look like `publisher/model` and pick a
// variant with `@quant`; the store keeps hub models as `hf.co/<org>/<repo>:<tag>`. Both spellings
// find the same stored model, as does the name `llamux list` shows.
import { statSync } from "node:fs";
import type { ModelStore, StoredModel } from "../../store/model-store.ts";
import { HUB_HOST, tryParseModelName } from "../../store/model-name.ts";
import type { ServedModel } from "../model-service.ts";

/** A stored model as a ServedModel (never pinned: loaded on demand, unloaded when idle). */
export interface StoreServedModel extends ServedModel {
  projectorPath?: string;
  /** The publisher LM Studio shows: the hub organisation or the registry namespace. */
  publisher: string;
}

function toServed(store: ModelStore, stored: StoredModel): StoreServedModel | undefined {
  try {
    const resolved = store.resolve(stored.name);
    if (!resolved) return undefined;
    return {
      id: stored.name,
      path: resolved.modelPath,
      created: Math.floor(stored.modifiedAt.getTime() / 1000),
      pinned: false,
      publisher: stored.parsedName.namespace,
      ...(resolved.projectorPath ? { projectorPath: resolved.projectorPath } : {}),
    };
  } catch {
    return undefined; // a model whose blobs are missing cannot be served; the store logs it on list
  }
}

/** Every stored model that can be served, newest first. */
export function storeServedModels(store: ModelStore): StoreServedModel[] {
  return store.list().flatMap((stored) => toServed(store, stored) ?? []);
}

/** The names a request may use for `org/repo[@quant]`: the hub model of that repository and tag. */
function hubSpellings(name: string): string[] {
  const at = name.lastIndexOf("@");
  const key = at > 0 ? name.slice(0, at) : name;
  const quant = at > 0 ? name.slice(at + 1) : undefined;
  if (key.split("/").length !== 2) return [];
  return quant ? [`${HUB_HOST}/${key}:${quant}`, `${HUB_HOST}/${key}:${quant.toUpperCase()}`] : [`${HUB_HOST}/${key}`];
}

/**
 * The stored model `name` means: its store name (`hf.co/org/repo:Q4_K_M`, `llama3.2`), or LM Studio's
 * `org/repo` (any stored tag, newest first) and `org/repo@quant`. Undefined when none matches.
 */
export function findStoreModel(store: ModelStore, name: string): StoreServedModel | undefined {
  const direct = tryParseModelName(name) && store.find(name);
  if (direct) return toServed(store, direct);
  for (const spelling of hubSpellings(name)) {
    const found = store.find(spelling);
    if (found) return toServed(store, found);
  }
  // `org/repo` without a tag: whichever tag of that repository was stored most recently.
  const [key] = name.split("@");
  const repo = key?.toLowerCase();
  if (!repo || repo.split("/").length !== 2 || name.includes("@")) return undefined;
  const stored = store.list().find((m) => m.parsedName.host === HUB_HOST && `${m.parsedName.namespace}/${m.parsedName.model}`.toLowerCase() === repo);
  return stored && toServed(store, stored);
}

/** Size of a model's files on disk (weights and projector). */
export function modelFileBytes(model: { path: string; projectorPath?: string }): number {
  const size = (path: string | undefined) => {
    try {
      return path ? statSync(path).size : 0;
    } catch {
      return 0;
    }
  };
  return size(model.path) + size(model.projectorPath);
}
