// The parameters of an /api/* request as option layers, lowest first: Ollama's defaults, the model's
// Modelfile parameters, the top-level sampling fields some clients send (the AI SDK's Ollama provider),
// then `options`. The option table (src/options) names, types and checks them.
import { logger } from "../../log.ts";
import { engineSettings } from "../../options/engine-settings.ts";
import { readOllamaOptions } from "../../options/ollama-names.ts";
import { mergeOptionValues, ollamaDefaults, type OptionValues } from "../../options/values.ts";
import { modelOptions } from "../chat-request.ts";
import type { EngineOptions } from "../../engine/types.ts";
import type { ServedModel } from "../model-service.ts";

const log = logger("ollama");

/** The top-level sampling fields some clients send, which Ollama ignores. */
interface TopLevelFields {
  max_output_tokens?: number | null;
  /** /api/generate only: the name ollama-ai-provider-v2's completion model gives its limit. */
  max_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
}

/**
 * `max_output_tokens` (or `max_tokens`), `temperature` and `top_p` at the top level of the body: Ollama
 * ignores them, which silently loses the limits of clients that send them there (ollama-ai-provider-v2
 * sends them on /api/chat, and on /api/generate with the limit as max_tokens). `options` wins.
 */
export function topLevelOptions(body: TopLevelFields): OptionValues {
  const values: OptionValues = {};
  const limit = body.max_output_tokens ?? body.max_tokens;
  if (limit != null) values.maxTokens = limit;
  if (body.temperature != null) values.temperature = body.temperature;
  if (body.top_p != null) values.topP = body.top_p;
  if (Object.keys(values).length) log.debug(`top-level sampling fields read as options: ${JSON.stringify(values)}`);
  return values;
}

export function nativeOptions(model: ServedModel, body: TopLevelFields & { options?: Record<string, unknown> | null }): OptionValues {
  return mergeOptionValues(ollamaDefaults(), modelOptions(model), topLevelOptions(body), readOllamaOptions(body.options));
}

/** The load options the model's parameters and the request's options set (an embedding request's too). */
export function loadOverrides(model: ServedModel, options: Record<string, unknown> | null | undefined): Partial<EngineOptions> {
  return engineSettings(mergeOptionValues(modelOptions(model), readOllamaOptions(options))).load;
}
