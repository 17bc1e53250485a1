// GET /v1/models and GET /v1/models/{id}.
import type { Context } from "hono";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";

const ownedBy = { a: "library", b: "vllm", c: "organization_owner" } as const;

function modelCard(deps: ServerDeps, model: ServedModel) {
  return { id: model.id, object: "model", created: model.created, owned_by: ownedBy[deps.profile.name], root: model.path, parent: null };
}

export function listModels(deps: ServerDeps) {
  return function listModelsHandler(c: Context) {
    return c.json({ object: "list", data: deps.models.list().map((m) => modelCard(deps, m)) });
  };
}

export function retrieveModel(deps: ServerDeps) {
  return function retrieveModelHandler(c: Context) {
    return c.json(modelCard(deps, deps.models.resolve(c.req.param("id"))));
  };
}
