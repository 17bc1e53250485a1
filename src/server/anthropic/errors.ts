// Errors on the Messages API in Anthropic's shape, whatever the profile: {"type": "error", "error":
// {"type", "message"}} with Anthropic's error types, so Claude Code and the SDK read them as theirs.
import type { ApiError } from "../api-error.ts";

const errorTypes: Record<number, string> = {
  400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
  413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error", 529: "overloaded_error",
};

export const isAnthropicPath = (path: string) => path === "/v1/messages" || path.startsWith("/v1/messages/");

export function anthropicErrorType(status: number): string {
  return errorTypes[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

export function anthropicErrorBody(error: ApiError) {
  return { type: "error", error: { type: anthropicErrorType(error.status), message: error.message } };
}
