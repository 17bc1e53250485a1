// The OpenAI-style error bodies the profiles answer with: the same envelope, {"error": {message, type,
// param, code}}, with each anchor's words for `type` and `code`.
import type { ApiError } from "../api-error.ts";

const vllmTypes: Record<number, string> = {
  400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError", 404: "NotFoundError", 413: "BadRequestError",
  415: "UnsupportedMediaTypeError", 429: "RateLimitError", 501: "NotImplementedError", 503: "ServiceUnavailableError",
};

/**
 * A named key's refusals, which no anchor has: the same words on every profile, OpenAI's code
 * (rate_limit_exceeded) for a limit, missing_scope for a scope.
 */
const keyRefusalTypes: Record<number, string> = { 403: "permission_error", 429: "rate_limit_error" };

/** Ollama's OpenAI layer: invalid_request_error, not_found_error or api_error, no param or code. */
export function ollamaOpenAiError(error: ApiError) {
  const refusal = keyRefusalTypes[error.status];
  if (refusal) return { error: { message: error.message, type: refusal, param: null, code: error.code } };
  const type = error.status === 400 ? "invalid_request_error" : error.status === 404 ? "not_found_error" : "api_error";
  return { error: { message: error.message, type, param: null, code: null } };
}

/** vLLM's: the exception class's name as `type`, the status as `code` (a key's refusal: its own code). */
export function vllmOpenAiError(error: ApiError) {
  const type = error.type ?? vllmTypes[error.status] ?? (error.status >= 500 ? "InternalServerError" : "BadRequestError");
  const code = keyRefusalTypes[error.status] && error.code ? error.code : error.status;
  return { error: { message: error.message, type, param: error.param, code } };
}

/** LM Studio's (and OpenAI's own) error types, with the code where there is one. */
export function lmStudioOpenAiError(error: ApiError) {
  const type = error.status === 400 || error.status === 413 ? "invalid_request_error"
    : error.status === 401 ? "authentication_error" : error.status === 404 ? "not_found_error" : keyRefusalTypes[error.status] ?? "api_error";
  return { error: { message: error.message, type, param: error.param, code: error.code } };
}
