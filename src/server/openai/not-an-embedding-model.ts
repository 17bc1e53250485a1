// A generative model asked for embeddings, refused in each anchor's words: Ollama's runner answers 501
// "this model does not support embeddings" (clients match that text), vLLM has no embeddings route for
// a generate model (400 "The model does not support Embeddings API"), and LM Studio cannot load it as an
// embedding model (404 `Failed to load model "x". Error: Model is not embedding.`).
import { ApiError } from "../api-error.ts";
import type { ProfileName } from "../profiles.ts";

export const OLLAMA_NO_EMBEDDINGS = "this model does not support embeddings";

export function notAnEmbeddingModel(profile: ProfileName, model: string): ApiError {
  switch (profile) {
    case "a":
      return new ApiError(501, OLLAMA_NO_EMBEDDINGS, { param: "model" });
    case "b":
      return new ApiError(400, "The model does not support Embeddings API", { param: "model" });
    case "c":
      return new ApiError(404, `Failed to load model "${model}". Error: Model is not embedding.`, { param: "model", code: "model_not_found" });
  }
}
