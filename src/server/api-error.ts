// One error type for every route: handlers throw it, and each profile renders it in its own shape.
import { ChatTemplateError } from "../chat/template.ts";
import { StructuredOutputError } from "../chat/structured/errors.ts";
import { EngineError } from "../engine/types.ts";
import { ImageInputError } from "../vision/image-input-error.ts";
import { AudioInputError } from "../audio/audio-input-error.ts";
import { ContextLimitError } from "../generation/chat-spec.ts";
import { NoSpeechOutputError } from "../generation/speech-spec.ts";
import { OptionError } from "../options/check-value.ts";
import { McpRequestError } from "../mcp/mcp-request-error.ts";
import { KeyRefusal } from "../keys/key-refusal.ts";

export class ApiError extends Error {
  readonly status: number;
  /** The request field the error is about, when there is one (vLLM and OpenAI report it as `param`). */
  readonly param: string | null;
  /** A machine-readable code where the anchor sends one (LM Studio's `model_not_found`). */
  readonly code: string | null;
  /** Headers the answer carries whatever its shape (a 429's Retry-After). */
  readonly headers: Record<string, string>;
  /** The error's type where the anchor names it otherwise than by its status (vLLM's InvalidUserInput). */
  readonly type: string | undefined;
  constructor(
    status: number, message: string,
    options: { param?: string | null; code?: string | null; cause?: unknown; headers?: Record<string, string>; type?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ApiError";
    this.status = status;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
    this.type = options.type;
  }
}

/** A key's refusal: a missing scope (403, code missing_scope), a limit (429, OpenAI's code and Retry-After), an expired key (401). */
export function fromKeyRefusal(refusal: KeyRefusal): ApiError {
  const { status, detail } = refusal;
  const code = status === 429 ? "rate_limit_exceeded" : status === 403 ? "missing_scope" : null;
  const headers: Record<string, string> = detail.retryAfterSeconds !== undefined ? { "Retry-After": String(detail.retryAfterSeconds) } : status === 401 ? { "WWW-Authenticate": "Bearer" } : {};
  return new ApiError(status, refusal.message, { code, headers, cause: refusal });
}

export const badRequest = (message: string, param?: string) => new ApiError(400, message, { param: param ?? null });
export const notFound = (message: string, param?: string) => new ApiError(404, message, { param: param ?? null });

/** Engine failures as HTTP errors: a full queue or an unreachable RPC server is 503, a misbehaving RPC server 502, a request that cannot fit 400. */
export function fromEngineError(error: EngineError): ApiError {
  switch (error.code) {
    case "busy":
    case "rpc_unavailable":
      return new ApiError(503, error.message, { cause: error });
    case "rpc_failure":
      return new ApiError(502, error.message, { cause: error });
    case "invalid_request":
    case "context_overflow":
      return new ApiError(400, error.message, { cause: error });
    default:
      return new ApiError(500, error.message, { cause: error });
  }
}

/**
 * A request that does not fit the context, in vLLM's words (what OpenAI-style clients parse). The
 * Responses, Messages and Ollama APIs word it their own way before it gets here.
 */
export function contextLimitError(error: ContextLimitError): ApiError {
  const { promptTokens, contextLength, maxTokens } = error;
  if (error.kind === "prompt") {
    return badRequest(
      `This model's maximum context length is ${contextLength} tokens. However, your request has ${promptTokens} input tokens. ` +
        "Please reduce the length of the input messages.",
      "input_tokens",
    );
  }
  return badRequest(
    `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${contextLength} tokens ` +
      `and your request has ${promptTokens} input tokens (${maxTokens} > ${contextLength} - ${promptTokens}).`,
    "max_tokens",
  );
}

/** Any thrown value as an ApiError; unknown errors become 500s. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof EngineError) return fromEngineError(error);
  if (error instanceof KeyRefusal) return fromKeyRefusal(error);
  // A template that cannot render this conversation is the request's problem, not the server's.
  if (error instanceof ChatTemplateError) return new ApiError(400, error.message, { cause: error });
  // So is an output constraint (schema, regex, tool_choice) that cannot be enforced.
  if (error instanceof StructuredOutputError) return new ApiError(400, error.message, { cause: error });
  if (error instanceof ImageInputError) return new ApiError(400, error.message, { cause: error });
  if (error instanceof AudioInputError) return new ApiError(400, error.message, { cause: error });
  if (error instanceof ContextLimitError) return contextLimitError(error);
  // Speech asked of a model that has none.
  if (error instanceof NoSpeechOutputError) return new ApiError(400, error.message, { param: "model", cause: error });
  // MCP servers a request may not use (unknown names, URLs without the flag or to private addresses).
  if (error instanceof McpRequestError) return new ApiError(400, error.message, { param: error.param, cause: error });
  // A parameter out of its range, named as the request spelled it.
  if (error instanceof OptionError) return new ApiError(400, error.message, { param: error.field, cause: error });
  return new ApiError(500, error instanceof Error ? error.message : String(error), { cause: error });
}
