// The OpenAI-style error bodies the profiles answer with: the same envelope, {"error": {message, type,
// param, code}}, with each anchor's words for `type` and `code`.
import type { ApiError } from "../api-error.ts";

const vllmTypes: Record<number, string> = {
  400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError", 413: "BadRequestError",
  415: "UnsupportedMediaTypeError", 501: "NotImplementedError", 503: "ServiceUnavailableError",
};

/** Ollama's OpenAI layer: invalid_request_error, not_found_error or api_error, no param or code. */
export function ollamaOpenAiError(error: ApiError) {
  const type = error.status === 400 ? "invalid_request_error" : error.status === 404 ? "not_found_error" : "api_error";
  return { error: { message: error.message, type, param: null, code: null } };
}

/** vLLM's: the exception class's name as `type`, the status as `code`. */
export function vllmOpenAiError(error: ApiError) {
  const type = vllmTypes[error.status] ?? (error.status >= 500 ? "InternalServerError" : "BadRequestError");
  return { error: { message: error.message, type, param: error.param, code: error.status } };
}

/** LM Studio's (and OpenAI's own) error types, with the code where there is one. */
export function lmStudioOpenAiError(error: ApiError) {
  const type = error.status === 400 || error.status === 413 ? "invalid_request_error"
    : error.status === 401 ? "authentication_error" : error.status === 404 ? "not_found_error" : "api_error";
  return { error: { message: error.message, type, param: error.param, code: error.code } };
}
