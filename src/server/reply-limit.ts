// How the agents' APIs (Responses, Messages) word a prompt that does not fit: a 400 that says how large
// it is, the most context the server would give the model, what sets that bound and, only where one can
// change the outcome, the setting that raises it. Their replies are clamped to the room left (a "clamp"
// limit), so only the prompt itself can fail to fit. Nothing is ever truncated to fit. The message starts
// as Anthropic's does ("prompt is too long: N tokens > M maximum"): Claude Code reads the limit from it.
import { ContextLimitError } from "../generation/chat-spec.ts";
import { ApiError } from "./api-error.ts";
import { grownContextSize } from "./context-growth.ts";
import type { Profile } from "./profiles/profile.ts";

/** Why the context ends where it does, and what (if anything) would move that end. */
function bound(profile: Profile, error: ContextLimitError): string {
  const { promptTokens, contextLength, ceiling } = error;
  const trained = ceiling?.trainedContext;
  if (ceiling?.boundBy === "trained" || (trained !== undefined && promptTokens >= trained)) {
    // past what the model was trained for, no setting helps
    const here = trained !== undefined && contextLength < trained ? `the model's context here is ${contextLength} tokens and it was trained for ${trained}` : `the model was trained for a context of ${trained ?? contextLength} tokens`;
    return `(${here}, the most it can have, and the reply needs at least one). Shorten the conversation or start a new one.`;
  }
  if (ceiling?.boundBy === "memory") {
    return `(the memory free for the model's KV cache holds ${contextLength} tokens of context; it was trained for ${trained}). ` +
      "Free memory (other loaded models, other programs) to let its context grow further.";
  }
  const enough = grownContextSize(promptTokens + 1, trained) ?? 2 ** Math.ceil(Math.log2(promptTokens + 1));
  return `(the model's context is ${contextLength} tokens per sequence and the reply needs at least one). To raise the context, ${profile.contextSetting(enough)}.`;
}

export function promptTooLong(profile: Profile, error: ContextLimitError): ApiError {
  return new ApiError(400, `prompt is too long: ${error.promptTokens} tokens > ${error.contextLength - 1} maximum ${bound(profile, error)}`,
    { param: "input", code: "context_length_exceeded", cause: error });
}

/** A rejection handler that words a ContextLimitError the agents' way and passes anything else on. */
export function agentContextErrors(profile: Profile) {
  return (error: unknown): never => {
    throw error instanceof ContextLimitError ? promptTooLong(profile, error) : error;
  };
}
