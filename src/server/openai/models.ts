// GET /v1/models and GET /v1/models/{id}. Where the profile lists the store (Ollama's), they list what
// /api/tags lists, in the shape Ollama's OpenAI layer gives (`owned_by` is the name's namespace: "library"
// for library models); elsewhere the served models with the profile's `owned_by`, and the LoRA adapters
// served on them (--enable-lora), each with its served model as `parent`, as vLLM lists them.
import type { Context } from "hono";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { listedModels } from "../model-listing.ts";
import { notFound } from "../api-error.ts";
import { DEFAULT_NAMESPACE, tryParseModelName } from "../../store/model-name.ts";

function modelCard(deps: ServerDeps, model: ServedModel) {
  const { adapter } = model;
  return {
    id: model.id, object: "model", created: model.created, owned_by: deps.profile.ownedBy,
    root: adapter ? adapter.path : model.path, parent: adapter ? adapter.parent : null,
  };
}

/** Ollama's card: `{id, object, created, owned_by}`, the owner being the name's namespace. */
function ollamaCard(model: ServedModel, modifiedAt: Date) {
  const namespace = model.stored ? tryParseModelName(model.id)?.namespace : undefined;
  return { id: model.id, object: "model", created: Math.floor(modifiedAt.getTime() / 1000), owned_by: namespace ?? DEFAULT_NAMESPACE };
}

export function listModels(deps: ServerDeps) {
  return function listModelsHandler(c: Context) {
    if (deps.profile.modelList === "store") return c.json({ object: "list", data: listedModels(deps).map((m) => ollamaCard(m.model, m.modifiedAt)) });
    return c.json({ object: "list", data: [...deps.models.list(), ...deps.models.listAdapters()].map((m) => modelCard(deps, m)) });
  };
}

export function retrieveModel(deps: ServerDeps) {
  return function retrieveModelHandler(c: Context) {
    const id = c.req.param("id") ?? "";
    if (deps.profile.modelList === "served") return c.json(modelCard(deps, deps.models.resolve(id)));
    // Ollama answers from /api/show, in its words
    const model = deps.models.list().find((m) => m.id === id) ?? deps.models.resolveStored(id);
    if (!model) throw notFound(`model '${id}' not found`, "model");
    return c.json(ollamaCard(model, new Date(model.created * 1000)));
  };
}
