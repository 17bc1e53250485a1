// How long an agent's reply may be (Responses and Messages APIs): the prompt must fit the context with
// room for at least one token, else a 400 that says how large it is, how large the context is and which
// setting raises it; the reply's limit is then the request's, capped by the room left. Nothing is ever
// truncated to fit.
import { ApiError } from "./api-error.ts";
import type { Profile } from "./profiles.ts";

const contextSettings: Record<Profile["name"], string> = {
  a: "start the server with OLLAMA_CONTEXT_LENGTH=32768 (or --ctx-size 32768), or set PARAMETER num_ctx 32768 in the model's Modelfile",
  b: "start the server with --max-model-len 32768",
  c: "start the server with --ctx-size 32768",
};

export function replyLimit(profile: Profile, promptTokens: number, context: number, requested: number | undefined): number | undefined {
  if (promptTokens >= context) {
    throw new ApiError(400,
      `prompt is too long: ${promptTokens} tokens > ${context - 1} maximum (the model's context is ${context} tokens per sequence ` +
      `and the reply needs at least one). To raise the context, ${contextSettings[profile.name]}.`,
      { param: "input", code: "context_length_exceeded" });
  }
  const room = context - promptTokens;
  return requested === undefined ? room : Math.min(requested, room);
}
