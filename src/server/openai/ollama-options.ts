// Profile a only: Ollama users cannot set the context length over /v1 and ask for it, so llamux
// accepts `num_ctx` at the top level or in an Ollama-style `options` object there.
import type { EngineOptions } from "../../engine/types.ts";
import { badRequest } from "../api-error.ts";
import type { Profile } from "../profiles.ts";
import type { SamplingRequest } from "./schemas.ts";

export function loadOverrides(profile: Profile, body: SamplingRequest): Partial<EngineOptions> {
  if (profile.name !== "a") return {};
  const fromOptions = body.options?.num_ctx;
  if (fromOptions !== undefined && (typeof fromOptions !== "number" || !Number.isInteger(fromOptions) || fromOptions < 4)) {
    throw badRequest('Invalid value for "options.num_ctx": expected an integer of at least 4', "options.num_ctx");
  }
  const numCtx = body.num_ctx ?? (fromOptions as number | undefined);
  return numCtx !== undefined ? { contextPerSequence: numCtx } : {};
}
