// What every native route does first: find the model a request names (in Ollama's words when it is
// missing, which differ per route), read its keep_alive, and load or unload it for an empty request.
import { ApiError, badRequest, notFound } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import type { KeepAliveRequest, ServedModel } from "../model-service.ts";
import type { EngineOptions } from "../../engine/types.ts";
import { keepAliveMs } from "../../duration.ts";

/** generate, chat, show and delete say `model 'x' not found`; embed and the scheduler add a hint. */
export type NotFoundWording = "quoted" | "pull-hint";

/** Ollama's words for a model the scheduler cannot find (embed, and every /v1 route). */
export function pullHintNotFound(name: string): string {
  return `model "${name}" not found, try pulling it first`;
}

function notFoundMessage(name: string, wording: NotFoundWording): string {
  return wording === "quoted" ? `model '${name}' not found` : pullHintNotFound(name);
}

export function findModel(deps: ServerDeps, name: string, wording: NotFoundWording): ServedModel {
  if (!name) throw notFound(notFoundMessage(name, wording));
  try {
    return deps.models.resolve(name);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw notFound(notFoundMessage(name, wording));
    throw error;
  }
}

/** Ollama's capability refusal: `"qwen3:8b" does not support tools`. */
export function doesNotSupport(model: ServedModel, capability: string): ApiError {
  return badRequest(`"${model.id}" does not support ${capability}`);
}

/**
 * A request's keep_alive replaces the model's (Ollama's rule); without one, a model this request loads
 * gets the server's default and a loaded one keeps what it has.
 */
export function keepAliveOf(deps: ServerDeps, model: ServedModel, value: number | string | null | undefined): KeepAliveRequest {
  if (value === undefined || value === null) return { ms: deps.models.defaultKeepAliveMs(model), policy: "on-load" };
  try {
    return { ms: keepAliveMs(value), policy: "replace" };
  } catch (error) {
    throw badRequest((error as Error).message, "keep_alive");
  }
}

/**
 * An empty prompt or message list: load the model (and apply keep_alive), or with keep_alive 0 unload
 * it without loading it first. Returns Ollama's done_reason.
 */
export async function loadOrUnload(
  deps: ServerDeps, model: ServedModel, overrides: Partial<EngineOptions>, keepAlive: KeepAliveRequest,
): Promise<"load" | "unload"> {
  if (keepAlive.ms === 0) {
    await deps.models.unload(model);
    return "unload";
  }
  await deps.models.engine(model, overrides, keepAlive);
  return "load";
}
