// POST /api/copy and DELETE /api/delete: a second name for a stored model, and removing a name (with
// the blobs no other model uses). Both answer 200 with an empty body.
import type { Context } from "hono";
import { z } from "zod";
import { tryParseModelName } from "../../store/model-name.ts";
import { ModelNotFoundError } from "../../store/model-store.ts";
import { ApiError, badRequest, notFound } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";

const copySchema = z.object({ source: z.string().optional(), destination: z.string().optional() });
const deleteSchema = z.object({ model: z.string().optional(), name: z.string().optional().describe("deprecated: model") });

export function storeOf(deps: ServerDeps) {
  const store = deps.models.store;
  if (!store) throw new ApiError(501, "this server has no model store");
  return store;
}

export function copyModel(deps: ServerDeps) {
  return async function copyHandler(c: Context) {
    const body = validate(copySchema, await readJsonBody(c));
    const source = body.source ?? "";
    const destination = body.destination ?? "";
    if (!tryParseModelName(source)) throw badRequest(`source "${source}" is invalid`, "source");
    if (!tryParseModelName(destination)) throw badRequest(`destination "${destination}" is invalid`, "destination");
    try {
      await storeOf(deps).copy(source, destination);
    } catch (error) {
      if (error instanceof ModelNotFoundError) throw notFound(`model "${source}" not found`);
      throw error;
    }
    return c.body(null, 200);
  };
}

export function deleteModel(deps: ServerDeps) {
  return async function deleteHandler(c: Context) {
    const body = validate(deleteSchema, await readJsonBody(c));
    const name = body.model || body.name || "";
    if (!name) throw badRequest("model is required", "model");
    const store = storeOf(deps);
    const stored = store.find(name);
    if (!stored) throw notFound(`model '${name}' not found`);
    // An engine loaded for this model's file is unloaded unless another name still uses the file. Its
    // engines are found before the removal: finding them reads the file's header, which may go with it.
    const model = deps.models.resolveStored(name);
    const engines = model ? deps.models.loadedOf(model) : [];
    await store.remove(name);
    if (model && !store.referencedDigests().has(model.path.replace(/^.*sha256-/, ""))) await deps.models.unloadEngines(engines);
    return c.body(null, 200);
  };
}
