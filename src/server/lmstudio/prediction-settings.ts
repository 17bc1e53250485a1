// LM Studio's native prediction settings, as /api/v1/chat takes them and as the SDK socket's prediction
// config stack carries them, translated once into the engine's sampling, stop and load options: the
// profile's defaults, then the model's own (Modelfile parameters), then what the request sets.
import type { OutputConstraint } from "../../chat/structured/constraint.ts";
import type { EngineOptions } from "../../engine/types.ts";
import type { ServedModel } from "../model-service.ts";
import type { Profile } from "../profiles.ts";
import { modelDefaults, withModelStops } from "../openai/ollama-options.ts";
import { generationFields, toSamplerSettings } from "../openai/translate.ts";

export interface LmStudioPrediction {
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  minP?: number | undefined;
  repeatPenalty?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  maxTokens?: number | undefined;
  stop?: string[] | undefined;
  seed?: number | undefined;
  /** Structured output (JSON schema, JSON, grammar): the caller hands it to planChatOutput, which makes the grammar. */
  constraint?: OutputConstraint;
  /** Context for a model this prediction loads. */
  contextLength?: number | undefined;
}

/** Load options of a model this prediction loads: the model's own, and the context length asked for. */
export function predictionLoadOverrides(model: ServedModel, prediction: LmStudioPrediction): Partial<EngineOptions> {
  return { ...modelDefaults(model).load, ...(prediction.contextLength !== undefined ? { contextPerSequence: prediction.contextLength } : {}) };
}

/** The engine request's sampling and generation fields (maxTokens unset: until the context ends). */
export function predictionRequest(profile: Profile, model: ServedModel, prediction: LmStudioPrediction) {
  const defaults = modelDefaults(model);
  const sampling = toSamplerSettings({
    temperature: prediction.temperature, top_p: prediction.topP, top_k: prediction.topK, min_p: prediction.minP,
    repeat_penalty: prediction.repeatPenalty, presence_penalty: prediction.presencePenalty, frequency_penalty: prediction.frequencyPenalty,
    seed: prediction.seed,
  }, profile, defaults.sampling);
  const maxTokens = prediction.maxTokens ?? defaults.maxTokens;
  const fields = withModelStops(generationFields({ stop: prediction.stop }, maxTokens, undefined), defaults);
  return { sampling, fields, maxTokens };
}
