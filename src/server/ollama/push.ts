// POST /api/push: a stored model to an Ollama registry (store/registry/registry-push.ts), with Ollama's
// progress lines. Off unless the server runs with --allow-push: a push sends a stored model to whatever
// registry the request's name names.
import type { Context } from "hono";
import { z } from "zod";
import { tryParseModelName } from "../../store/model-name.ts";
import { ModelNotFoundError } from "../../store/model-store.ts";
import { pushToRegistry } from "../../store/registry/registry-push.ts";
import { ApiError, badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { storeOf } from "./copy-delete.ts";
import { respondProgress } from "./progress.ts";

const pushSchema = z.object({
  model: z.string().optional(),
  name: z.string().optional().describe("deprecated: model"),
  insecure: z.boolean().nullable().optional().describe("talk to the registry over plain http"),
  stream: z.boolean().nullable().optional(),
  username: z.string().optional().describe("deprecated, ignored (the registry key signs token requests)"),
  password: z.string().optional().describe("deprecated, ignored"),
});

export const PUSH_OFF = "pushing models is off on this server: start it with --allow-push";

export function push(deps: ServerDeps) {
  return async function pushHandler(c: Context) {
    const body = validate(pushSchema, await readJsonBody(c));
    const name = body.model || body.name || "";
    if (!name) throw badRequest("model is required", "model");
    if (!tryParseModelName(name)) throw badRequest("invalid model name", "model");
    if (!deps.allowPush) throw new ApiError(403, PUSH_OFF);
    const store = storeOf(deps);
    return respondProgress(c, body.stream !== false, async (onProgress, signal) => {
      await pushToRegistry(store, name, { onProgress, signal, insecure: body.insecure === true });
    }, (error) => {
      if (error instanceof ApiError) return error;
      return new ApiError(error instanceof ModelNotFoundError ? 404 : 500, (error as Error).message, { cause: error });
    });
  };
}
