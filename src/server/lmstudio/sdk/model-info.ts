// LM Studio's model descriptions on the SDK socket: ModelInfo for a downloaded model (listDownloadedModels,
// the `resolved`/`startLoading` packets) and ModelInstanceInfo for a loaded one (listLoaded, getModelInfo,
// the load channels' last packet), built from the same facts as /api/v1/models.
import type { LoadedModel, ServedModel } from "../../model-service.ts";
import type { LmStudioModelService } from "../model-service.ts";
import { bitsPerWeight, modelFacts } from "../model-facts.ts";
import { modelFileBytes, modelFiles } from "../store-models.ts";

export type Domain = "llm" | "embedding";

export function domainOf(model: ServedModel): Domain {
  return modelFacts(modelFiles(model)).type === "embeddings" ? "embedding" : "llm";
}

/** ModelInfo: llmInfoSchema or embeddingModelInfoSchema. */
export function modelInfo(model: ServedModel) {
  const facts = modelFacts(modelFiles(model));
  const bits = bitsPerWeight(facts.quantization);
  const base = {
    modelKey: model.id,
    format: "gguf" as const,
    displayName: model.id,
    path: model.path,
    sizeBytes: modelFileBytes(model),
    paramsString: facts.paramsString,
    architecture: facts.arch,
    ...(bits !== null ? { quantization: { name: facts.quantization, bits } } : {}),
    maxContextLength: facts.maxContextLength,
  };
  if (facts.type === "embeddings") return { type: "embedding" as const, ...base };
  return { type: "llm" as const, ...base, vision: facts.type === "vlm", trainedForToolUse: facts.trainedForToolUse };
}

/** ModelInstanceInfo: the model's info plus the instance's identifier, reference and context length. */
export function instanceInfo(models: LmStudioModelService, loaded: LoadedModel) {
  const identifier = models.instanceId(loaded);
  return { ...modelInfo(loaded.model), identifier, instanceReference: identifier, contextLength: loaded.engine.info.contextPerSequence };
}

/** The instance's load configuration as LM Studio's KV config (what getLoadConfig and `success` carry). */
export function loadConfigOf(loaded: LoadedModel) {
  const { info, options } = loaded.engine;
  if (info.embeddings) return { fields: [{ key: "embedding.load.contextLength", value: info.contextPerSequence }] };
  return {
    fields: [
      { key: "llm.load.contextLength", value: info.contextPerSequence },
      { key: "llm.load.llama.evalBatchSize", value: options.batchSize ?? 512 },
      { key: "llm.load.llama.flashAttention", value: options.flashAttention === "on" },
      { key: "llm.load.llama.acceleration.offloadRatio", value: (options.gpuLayers ?? 0) === 0 ? 0 : "max" },
    ],
  };
}
