// LM Studio's `draft_model` request field: the engine that serves the request speculates with that model
// as its draft (loaded beside the main model, as LM Studio does just in time). Profiles without it ignore it.
import type { EngineOptions } from "../../engine/types.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";

export function draftModelOverrides(deps: ServerDeps, draftModel: string | null | undefined): Pick<EngineOptions, "speculative"> {
  if (!deps.profile.v1DraftModel || !draftModel) return {};
  const draft = deps.models.resolveDraft(draftModel);
  if (deps.models.embeds(draft)) throw badRequest(`Model "${draft.id}" is an embedding model and cannot be a draft model`, "draft_model");
  return { speculative: { method: "draft", draftModelPath: draft.path } };
}
