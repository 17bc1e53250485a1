// POST /detokenize: token ids back to text, special tokens written out, as vLLM's tokenizer.decode does.
import type { Context } from "hono";
import { badRequest } from "../api-error.ts";
import { tokenIdProblem } from "../../engine/token-ids.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { detokenizeSchema } from "./schemas.ts";

export function detokenize(deps: ServerDeps) {
  return async function detokenizeHandler(c: Context) {
    const body = validate(detokenizeSchema, await readJsonBody(c));
    const model = deps.models.resolve(body.model ?? undefined);
    const engine = await deps.models.engine(model);
    // An id outside the vocabulary would trip an assertion in llama.cpp and end the engine process.
    const problem = tokenIdProblem(body.tokens, engine.info.vocabularySize, "tokens");
    if (problem) throw badRequest(problem, "tokens");
    return c.json({ prompt: await engine.detokenize(body.tokens) });
  };
}
