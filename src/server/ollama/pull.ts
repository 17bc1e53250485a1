// POST /api/pull: a model from the Hugging Face hub (`hf.co/org/repo[:quant]`) or an Ollama registry
// into the store, with Ollama's progress lines.
import type { Context } from "hono";
import { z } from "zod";
import { tryParseModelName } from "../../store/model-name.ts";
import { pullModel } from "../../store/pull.ts";
import { ApiError, badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { storeOf } from "./copy-delete.ts";
import { respondProgress } from "./progress.ts";

const pullSchema = z.object({
  model: z.string().optional(),
  name: z.string().optional().describe("deprecated: model"),
  insecure: z.boolean().nullable().optional().describe("accepted; a registry given as http:// is used over HTTP"),
  stream: z.boolean().nullable().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
});

export function pull(deps: ServerDeps) {
  return async function pullHandler(c: Context) {
    const body = validate(pullSchema, await readJsonBody(c));
    const name = body.model || body.name || "";
    if (!name) throw badRequest("model is required", "model");
    if (!tryParseModelName(name)) throw badRequest("invalid model name", "model");
    const store = storeOf(deps);
    return respondProgress(c, body.stream !== false, async (onProgress, signal) => {
      await pullModel(store, name, { onProgress, signal });
    }, (error) => (error instanceof ApiError ? error : new ApiError(500, (error as Error).message, { cause: error })));
  };
}
