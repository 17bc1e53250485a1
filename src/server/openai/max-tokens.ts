// LM Studio's clients and examples send `max_tokens: -1` for "no limit"; profile c reads it so. On the
// other profiles a limit below the route's minimum stays a 400, as vLLM and Ollama's /v1 answer.
import { badRequest } from "../api-error.ts";
import type { Profile } from "../profiles/profile.ts";

/** The request's limit, "unlimited" for LM Studio's -1, undefined when unset. `min` is the smallest limit the route takes. */
export function requestedMaxTokens(profile: Profile, value: number | null | undefined, min: number): number | "unlimited" | undefined {
  if (value === -1 && profile.unlimitedMaxTokens) return "unlimited";
  if (value != null && value < min) throw badRequest(`Invalid value for "max_tokens": must be at least ${min}`, "max_tokens");
  return value ?? undefined;
}
