// Ollama's side of fitting a request to the context: a prompt that cannot fit (a chat with truncate
// false, or one whose kept messages alone are too long) is a 400 in Ollama's words. The fitting itself
// (dropping the oldest messages, cutting a raw prompt) is the orchestrator's (generation/prompt-fit.ts).
import { ContextLimitError, type ModelHandle } from "../../generation/chat-spec.ts";
import { badRequest } from "../api-error.ts";

export const PROMPT_TOO_LONG =
  "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length";

/** A rejection handler that words a ContextLimitError as Ollama does and passes anything else on. */
export function ollamaContextErrors(error: unknown): never {
  throw error instanceof ContextLimitError ? badRequest(PROMPT_TOO_LONG) : error;
}

/** The model handle, telling `loaded` when its engine is ready (Ollama's load_duration). */
export function timedLoad(model: ModelHandle, loaded: (at: number) => void): ModelHandle {
  return {
    ...(model.adapter !== undefined ? { adapter: model.adapter } : {}),
    engine: async (options) => {
      const engine = await model.engine(options);
      loaded(performance.now());
      return engine;
    },
  };
}
