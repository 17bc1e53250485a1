// The three personalities: which port they take, which sampling defaults an omitted field gets, and
// how an error is shaped on the wire. Everything else is shared.
import type { SamplerSettings } from "../engine/types.ts";
import type { ApiError } from "./api-error.ts";
import { lmStudioV1ErrorBody } from "./lmstudio/v1-error.ts";

export type ProfileName = "a" | "b" | "c";

export interface Profile {
  name: ProfileName;
  /** The server this profile stands in for, for logs. */
  anchor: "Ollama" | "vLLM" | "LM Studio";
  defaultPort: number;
  /** Sampling settings for fields a /v1 request omits (before the model's own defaults). */
  openAiSampling: Partial<SamplerSettings>;
  /** Context per sequence when nothing else sets it; undefined means the model's trained context. */
  defaultContext: number | undefined;
  /** How long a model loaded on demand (not named on `serve`) may stay idle before it is unloaded. */
  idleUnloadMs: number;
  /** Rerank and score routes pass scores through a sigmoid unless the request's use_activation is false (vLLM's default); otherwise raw logits. */
  rerankActivation?: boolean;
  /** Body of an error on an OpenAI-compatible route. */
  openAiErrorBody(error: ApiError): unknown;
  /** Body of an error on any route: the profile's native routes may have their own shape. */
  errorBody(error: ApiError, path: string): unknown;
}

const statusTypes: Record<number, string> = {
  400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError", 413: "BadRequestError",
  415: "UnsupportedMediaTypeError", 501: "NotImplementedError", 503: "ServiceUnavailableError",
};

function openAiType(status: number): string {
  if (status === 400 || status === 413) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 404) return "not_found_error";
  return "api_error";
}

export const profiles: Record<ProfileName, Profile> = {
  a: {
    name: "a",
    anchor: "Ollama",
    defaultPort: 11434,
    // Ollama's /v1 sets temperature and top_p to 1.0 when absent; the rest are its DefaultOptions.
    openAiSampling: { temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1, repeatLastN: 64 },
    defaultContext: 4096,
    idleUnloadMs: 5 * 60_000,
    openAiErrorBody: (error) => ({
      error: { message: error.message, type: error.status === 400 ? "invalid_request_error" : error.status === 404 ? "not_found_error" : "api_error", param: null, code: null },
    }),
    // Ollama's native /api/* routes (and /v1/systemone) answer {"error": "..."}; a full queue in Ollama's words (two spaces and all).
    errorBody(error, path) {
      if (!path.startsWith("/api/") && path !== "/v1/systemone") return this.openAiErrorBody(error);
      return { error: error.status === 503 ? "server busy, please try again.  maximum pending requests exceeded" : error.message };
    },
  },
  b: {
    name: "b",
    anchor: "vLLM",
    defaultPort: 8000,
    openAiSampling: { temperature: 1, topP: 1, topK: 0, minP: 0, repeatPenalty: 1 },
    defaultContext: undefined,
    idleUnloadMs: 5 * 60_000,
    rerankActivation: true,
    openAiErrorBody: (error) => ({
      error: { message: error.message, type: statusTypes[error.status] ?? (error.status >= 500 ? "InternalServerError" : "BadRequestError"), param: error.param, code: error.status },
    }),
    errorBody(error) {
      return this.openAiErrorBody(error);
    },
  },
  c: {
    name: "c",
    anchor: "LM Studio",
    defaultPort: 1234,
    openAiSampling: { temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1 },
    defaultContext: 4096,
    // LM Studio's default TTL for models loaded just in time.
    idleUnloadMs: 60 * 60_000,
    openAiErrorBody: (error) => ({ error: { message: error.message, type: openAiType(error.status), param: error.param, code: error.code } }),
    // LM Studio's REST API v1 has its own error type words.
    errorBody(error, path) {
      return path.startsWith("/api/v1/") ? lmStudioV1ErrorBody(error) : this.openAiErrorBody(error);
    },
  },
};
