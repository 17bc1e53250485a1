// The parameters of an OpenAI-style body as option layers: the profile's defaults, the model's own, then
// the body's fields (named by the option table), its stop strings and, where the profile takes it, the
// context it asks for.
import type { OptionValues } from "../options/values.ts";
import { mergeOptionValues } from "../options/values.ts";
import { readWireOptions } from "../options/wire-names.ts";
import { badRequest } from "./api-error.ts";
import { modelOptions, stopOption } from "./chat-request.ts";
import type { ServedModel } from "./model-service.ts";
import type { Profile } from "./profiles/profile.ts";

/** `num_ctx` or `options.num_ctx` on /v1, where the profile reads them (Ollama's users ask for it). */
function contextOption(profile: Profile, body: Record<string, unknown>): OptionValues {
  if (!profile.v1ContextOption) return {};
  const fromOptions = (body.options as Record<string, unknown> | undefined)?.num_ctx;
  if (fromOptions !== undefined && (typeof fromOptions !== "number" || !Number.isInteger(fromOptions) || fromOptions < 4)) {
    throw badRequest('Invalid value for "options.num_ctx": expected an integer of at least 4', "options.num_ctx");
  }
  const numCtx = (body.num_ctx as number | undefined) ?? (fromOptions as number | undefined);
  return numCtx !== undefined ? { contextLength: numCtx } : {};
}

/** Lowest first: the profile's defaults, the model's Modelfile parameters, the request's fields. */
export function requestOptions(profile: Profile, model: ServedModel, body: Record<string, unknown>, stop?: string[]): OptionValues {
  return mergeOptionValues(
    profile.openAiDefaults, modelOptions(model), readWireOptions(body, profile.preferredWireNames), stopOption(stop), contextOption(profile, body),
  );
}
