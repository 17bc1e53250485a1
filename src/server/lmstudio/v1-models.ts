// LM Studio's REST API v1 model management: GET /api/v1/models, POST /api/v1/models/load and
// POST /api/v1/models/unload (shapes in routes.ts).
import type { Context } from "hono";
import { z } from "zod";
import type { EngineOptions } from "../../engine/types.ts";
import { badRequest, notFound } from "../api-error.ts";
import type { LoadedModel, ServedModel } from "../model-service.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { LmStudioModelService } from "./model-service.ts";
import { bitsPerWeight, modelFacts } from "./model-facts.ts";
import { modelFileBytes, modelFiles, publisherOf } from "./store-models.ts";

const loadOptions = {
  context_length: z.number().int().min(16).optional().describe("context per sequence in tokens"),
  eval_batch_size: z.number().int().min(1).optional().describe("most tokens per decode step"),
  flash_attention: z.boolean().optional(),
  num_experts: z.number().int().min(1).optional().describe("accepted; the model's own expert count is used"),
  offload_kv_cache_to_gpu: z.boolean().optional().describe("accepted; the KV cache follows the layers"),
  gpu_layers: z.number().int().min(-1).optional().describe("llamux: layers to offload to the GPU, -1 for all"),
  parallel: z.number().int().min(1).max(64).optional().describe("sequences decoded together"),
  ttl: z.number().int().min(1).optional().describe("idle seconds before unloading; default: never"),
};

const loadSchema = z.object({
  model: z.string().min(1).describe("model key, store name or GGUF path"),
  ...loadOptions,
  /** Earlier LM Studio docs nest the options under `config`; the top-level field wins. */
  config: z.object(loadOptions).optional(),
  echo_load_config: z.boolean().optional(),
});

const unloadSchema = z.object({ instance_id: z.string().min(1) });

/** The instance's load configuration; embedding models have only a context length and only MoE models an expert count, as in LM Studio. */
function loadConfig(loaded: LoadedModel) {
  const { info, options } = loaded.engine;
  if (info.embeddings) return { context_length: info.contextPerSequence };
  const experts = Number(info.metadata[`${info.architecture}.expert_used_count`] ?? 0);
  return {
    context_length: info.contextPerSequence,
    eval_batch_size: options.batchSize ?? 512,
    flash_attention: options.flashAttention === "on",
    ...(experts > 0 ? { num_experts: experts } : {}),
    offload_kv_cache_to_gpu: (options.gpuLayers ?? 0) !== 0,
    parallel: info.sequences,
    ...(options.gpuLayers !== undefined ? { gpu_layers: options.gpuLayers } : {}),
  };
}

/** A model in LM Studio's v1 listing; embedding models have no architecture, capabilities or description there. */
function v1Model(models: LmStudioModelService, model: ServedModel) {
  const facts = modelFacts(modelFiles(model));
  const embedding = facts.type === "embeddings";
  return {
    type: embedding ? "embedding" : "llm",
    publisher: publisherOf(model),
    key: model.id,
    display_name: model.id,
    ...(embedding ? {} : { architecture: facts.arch }),
    quantization: { name: facts.quantization, bits_per_weight: bitsPerWeight(facts.quantization) },
    size_bytes: modelFileBytes(model),
    params_string: facts.paramsString,
    loaded_instances: models.loadedOf(model).map((loaded) => ({ id: models.instanceId(loaded), config: loadConfig(loaded) })),
    max_context_length: facts.maxContextLength,
    format: "gguf",
    ...(embedding ? {} : {
      capabilities: {
        vision: facts.type === "vlm",
        ...(facts.audio ? { audio: true } : {}),
        ...(facts.speech ? { speech: true } : {}),
        trained_for_tool_use: facts.trainedForToolUse,
        ...(facts.reasoning ? { reasoning: { allowed_options: ["off", "on"], default: "on" } } : {}),
      },
      description: null,
    }),
  };
}

export function v1ListModels(models: LmStudioModelService) {
  return function v1ListModelsHandler(c: Context) {
    return c.json({ models: models.list().map((model) => v1Model(models, model)) });
  };
}

function engineOverrides(request: z.infer<typeof loadSchema>): Partial<EngineOptions> {
  const body = { ...request.config, ...Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined)) } as z.infer<typeof loadSchema>;
  const overrides: Partial<EngineOptions> = {};
  if (body.context_length !== undefined) overrides.contextPerSequence = body.context_length;
  if (body.eval_batch_size !== undefined) overrides.batchSize = body.eval_batch_size;
  if (body.flash_attention !== undefined) overrides.flashAttention = body.flash_attention ? "on" : "off";
  if (body.gpu_layers !== undefined) overrides.gpuLayers = body.gpu_layers;
  if (body.parallel !== undefined) overrides.parallel = body.parallel;
  return overrides;
}

export function v1LoadModel(models: LmStudioModelService) {
  return async function v1LoadModelHandler(c: Context) {
    const body = validate(loadSchema, await readJsonBody(c));
    const model = models.find(body.model);
    if (!model) throw notFound(`Model "${body.model}" not found`, "model");
    const started = performance.now();
    // Loaded on request, a model stays until unloaded unless a ttl is given (as `lms load`).
    const ttl = body.ttl ?? body.config?.ttl;
    const engine = await models.load(model, engineOverrides(body), { ms: ttl !== undefined ? ttl * 1000 : Infinity, policy: "replace" });
    const loaded = models.loaded().find((l) => l.engine === engine);
    if (!loaded) throw badRequest(`Model "${body.model}" was unloaded while it loaded`, "model");
    return c.json({
      type: modelFacts(modelFiles(model)).type === "embeddings" ? "embedding" : "llm",
      instance_id: models.instanceId(loaded),
      load_time_seconds: (performance.now() - started) / 1000,
      status: "loaded",
      ...(body.echo_load_config ? { load_config: loadConfig(loaded) } : {}),
    });
  };
}

export function v1UnloadModel(models: LmStudioModelService) {
  return async function v1UnloadModelHandler(c: Context) {
    const { instance_id: instanceId } = validate(unloadSchema, await readJsonBody(c));
    const exact = models.loaded().find((l) => models.instanceId(l) === instanceId);
    // A model's name (as `lms unload <key>` passes it) unloads every instance of that model.
    const named = models.find(instanceId);
    const instances = exact ? [exact] : named ? models.loadedOf(named) : [];
    if (instances.length === 0) throw notFound(`No loaded model instance "${instanceId}"`, "instance_id");
    const ids = instances.map((loaded) => models.instanceId(loaded));
    await Promise.all(instances.map((loaded) => models.unloadInstance(loaded.engine)));
    return c.json({ instance_id: ids[0] });
  };
}
