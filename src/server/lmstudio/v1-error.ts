// LM Studio's REST API v1 error body: {"error": {"type", "message", "code"?, "param"?}}, with its own
// type words (the OpenAI-compatible routes keep OpenAI's shape).
import type { ApiError } from "../api-error.ts";

function v1ErrorType(error: ApiError): string {
  if (error.status === 404) return error.param === "job_id" ? "job_not_found" : "model_not_found";
  if (error.status === 501) return "not_implemented";
  // a named key's refusals (LM Studio's own tokens have permissions too, but no documented error words)
  if (error.status === 403) return "permission_denied";
  if (error.status === 429) return "rate_limit_exceeded";
  if (error.status >= 500) return "internal_error";
  if (error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 403) return "invalid_request";
  return "unknown";
}

export function lmStudioV1ErrorBody(error: ApiError) {
  return {
    error: {
      type: v1ErrorType(error), message: error.message,
      ...(error.code ? { code: error.code } : {}), ...(error.param ? { param: error.param } : {}),
    },
  };
}
