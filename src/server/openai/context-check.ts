// Refuses requests that cannot fit the context, in vLLM's words (profiles b and c). Profile a keeps
// Ollama's behaviour of generating until the context is full.
import { badRequest } from "../api-error.ts";
import type { Profile } from "../profiles.ts";

export function checkContextLength(profile: Profile, promptTokens: number, maxTokens: number | undefined, contextLength: number): void {
  if (promptTokens >= contextLength) {
    throw badRequest(
      `This model's maximum context length is ${contextLength} tokens. However, your request has ${promptTokens} input tokens. ` +
        "Please reduce the length of the input messages.",
      "input_tokens",
    );
  }
  if (profile.name !== "a" && maxTokens !== undefined && promptTokens + maxTokens > contextLength) {
    throw badRequest(
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${contextLength} tokens ` +
        `and your request has ${promptTokens} input tokens (${maxTokens} > ${contextLength} - ${promptTokens}).`,
      "max_tokens",
    );
  }
}
