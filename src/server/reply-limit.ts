// How the agents' APIs (Responses, Messages) word a prompt that does not fit: a 400 that says how large
// it is, how large the context is and which setting raises it. Their replies are clamped to the room
// left (a "clamp" limit), so only the prompt itself can fail to fit. Nothing is ever truncated to fit.
import { ContextLimitError } from "../generation/chat-spec.ts";
import { ApiError } from "./api-error.ts";
import type { Profile } from "./profiles/profile.ts";

export function promptTooLong(profile: Profile, error: ContextLimitError): ApiError {
  const { promptTokens, contextLength } = error;
  return new ApiError(400,
    `prompt is too long: ${promptTokens} tokens > ${contextLength - 1} maximum (the model's context is ${contextLength} tokens per sequence ` +
    `and the reply needs at least one). To raise the context, ${profile.contextHint}.`,
    { param: "input", code: "context_length_exceeded", cause: error });
}

/** A rejection handler that words a ContextLimitError the agents' way and passes anything else on. */
export function agentContextErrors(profile: Profile) {
  return (error: unknown): never => {
    throw error instanceof ContextLimitError ? promptTooLong(profile, error) : error;
  };
}
