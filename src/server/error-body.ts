// The body of an error on a path: Anthropic's shape on the Messages API (every profile serves it),
// else the profile's own shape for that path.
import type { ApiError } from "./api-error.ts";
import { anthropicErrorBody, isAnthropicPath } from "./anthropic/errors.ts";
import type { Profile } from "./profiles.ts";

export function errorBodyFor(profile: Profile, error: ApiError, path: string): unknown {
  return isAnthropicPath(path) ? anthropicErrorBody(error) : profile.errorBody(error, path);
}
