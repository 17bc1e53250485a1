// POST /v1/embeddings: L2-normalised pooled embeddings of one or more strings.
import type { Context } from "hono";
import { z } from "zod";
import { badRequest } from "../api-error.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { ttlField, ttlKeepAlive } from "../ttl.ts";

export const embeddingsSchema = z.object({
  model: z.string().optional(),
  input: z.union([z.string(), z.array(z.string())]).describe("text or list of texts"),
  encoding_format: z.enum(["float", "base64"]).optional().describe("float arrays, or base64 of little-endian float32"),
  dimensions: z.number().int().min(1).optional(),
  user: z.string().optional(),
  ttl: ttlField,
});

function toBase64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString("base64");
}

export function embeddings(deps: ServerDeps) {
  return async function embeddingsHandler(c: Context) {
    const body = validate(embeddingsSchema, await readJsonBody(c));
    const inputs = typeof body.input === "string" ? [body.input] : body.input;
    if (inputs.length === 0) throw badRequest("Input must not be an empty list", "input");
    const model = deps.models.resolve(body.model);
    if (!deps.models.embeds(model)) throw deps.profile.notAnEmbeddingModel(model.id);
    if (deps.models.reranks(model)) throw badRequest(`Model "${model.id}" is a reranker and does not support embeddings: use /v1/rerank`, "model");
    const engine = await deps.models.engine(model, {}, ttlKeepAlive(deps.profile, body.ttl));
    if (body.dimensions !== undefined && body.dimensions !== engine.info.embeddingSize) {
      throw badRequest(`Model "${model.id}" produces ${engine.info.embeddingSize} dimensions and cannot shorten them to ${body.dimensions}`, "dimensions");
    }
    const results = [];
    for (const input of inputs) results.push(await engine.embed(input));
    const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
    c.set("usage", { promptTokens: tokens, completionTokens: 0 });
    return c.json({
      object: "list",
      data: results.map((r, index) => ({
        object: "embedding",
        embedding: body.encoding_format === "base64" ? toBase64(r.embedding) : r.embedding,
        index,
      })),
      model: model.id,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };
}
