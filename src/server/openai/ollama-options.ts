// Profile a only: Ollama users cannot set the context length over /v1 and ask for it, so llamux
// accepts `num_ctx` at the top level or in an Ollama-style `options` object there.
import type { EngineOptions } from "../../engine/types.ts";
import { badRequest } from "../api-error.ts";
import type { Profile } from "../profiles.ts";
import type { SamplingRequest } from "./schemas.ts";
import type { SamplerSettings } from "../../engine/types.ts";
import type { ServedModel } from "../model-service.ts";
import { explicitSamplerSettings, loadOverrides as optionLoadOverrides, parseOptions } from "../ollama/options.ts";

/** A store model's Modelfile parameters as /v1 defaults: under every field the request sets. */
export interface ModelDefaults {
  sampling: Partial<SamplerSettings>;
  stop: string[];
  maxTokens?: number;
  load: Partial<EngineOptions>;
}

export function modelDefaults(model: ServedModel): ModelDefaults {
  const options = parseOptions(model.stored?.parameters);
  return {
    sampling: explicitSamplerSettings(options),
    stop: options.stop ?? [],
    ...(options.num_predict !== undefined && options.num_predict >= 0 ? { maxTokens: options.num_predict } : {}),
    load: optionLoadOverrides(options),
  };
}

export function loadOverrides(profile: Profile, body: SamplingRequest): Partial<EngineOptions> {
  if (profile.name !== "a") return {};
  const fromOptions = body.options?.num_ctx;
  if (fromOptions !== undefined && (typeof fromOptions !== "number" || !Number.isInteger(fromOptions) || fromOptions < 4)) {
    throw badRequest('Invalid value for "options.num_ctx": expected an integer of at least 4', "options.num_ctx");
  }
  const numCtx = body.num_ctx ?? (fromOptions as number | undefined);
  return numCtx !== undefined ? { contextPerSequence: numCtx } : {};
}

/** The model's stop strings when the request names none. */
export function withModelStops<T extends { stop?: string[] }>(fields: T, defaults: ModelDefaults): T {
  return fields.stop?.length || !defaults.stop.length ? fields : { ...fields, stop: defaults.stop };
}
