// GET /api/v0/models and /api/v0/models/{id}: every model that can be named (served and stored), with
// LM Studio's v0 fields; `state` says whether it is loaded now.
import type { Context } from "hono";
import { notFound } from "../api-error.ts";
import type { ServedModel } from "../model-service.ts";
import type { LmStudioModelService } from "./model-service.ts";
import { modelFacts } from "./model-facts.ts";
import { modelFiles, publisherOf } from "./store-models.ts";

export function v0Model(models: LmStudioModelService, model: ServedModel) {
  const facts = modelFacts(modelFiles(model));
  const loaded = models.loadedOf(model)[0];
  return {
    id: model.id,
    object: "model",
    type: facts.type,
    publisher: publisherOf(model),
    arch: facts.arch,
    compatibility_type: "gguf",
    quantization: facts.quantization,
    state: loaded ? "loaded" : "not-loaded",
    max_context_length: facts.maxContextLength,
    // the context it is loaded with (grown for a long request: src/server/context-growth.ts)
    ...(loaded ? { loaded_context_length: loaded.engine.info.contextPerSequence } : {}),
    // "speech" (a text-to-speech model) is an llamux addition
    ...(facts.trainedForToolUse || facts.speech ? { capabilities: [...(facts.trainedForToolUse ? ["tool_use"] : []), ...(facts.speech ? ["speech"] : [])] } : {}),
  };
}

export function v0ListModels(models: LmStudioModelService) {
  return function v0ListModelsHandler(c: Context) {
    return c.json({ object: "list", data: models.list().map((model) => v0Model(models, model)) });
  };
}

export function v0RetrieveModel(models: LmStudioModelService) {
  return function v0RetrieveModelHandler(c: Context) {
    const id = c.req.param("id")!;
    const model = models.list().find((m) => m.id === id) ?? models.find(id);
    if (!model) throw notFound(`Model "${id}" not found`, "model");
    return c.json(v0Model(models, model));
  };
}
