// POST /api/embed: L2-normalised embeddings of one text or a list of texts; `dimensions` keeps the first
// N values (normalised again), and an input longer than the model takes is cut unless truncate is false.
import type { Context } from "hono";
import { EngineError } from "../../engine/types.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { metricsFields } from "./metrics.ts";
import { doesNotSupport, findModel, keepAliveOf } from "./model-request.ts";
import { loadOverrides } from "./options.ts";
import { embedSchema } from "./schemas.ts";

function inputsOf(input: unknown): string[] {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return input ? [input] : [];
  if (Array.isArray(input) && input.every((item) => typeof item === "string")) return input;
  throw badRequest("invalid input type", "input");
}

/** The first `dimensions` values, scaled back to unit length. */
export function shorten(vector: number[], dimensions: number | null | undefined): number[] {
  if (!dimensions || dimensions >= vector.length) return vector;
  const kept = vector.slice(0, dimensions);
  const norm = Math.hypot(...kept) || 1;
  return kept.map((v) => v / norm);
}

export function embed(deps: ServerDeps) {
  return async function embedHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(embedSchema, await readJsonBody(c));
    const name = body.model ?? "";
    const model = findModel(deps, name, "pull-hint");
    if (deps.models.reranks(model)) throw doesNotSupport(model, "embeddings");
    const inputs = inputsOf(body.input);
    // As Ollama: the model loads whatever it is, and only a generative model's runner refuses to embed
    const embeds = deps.models.embeds(model);
    if (!embeds && inputs.length > 0) throw deps.profile.notAnEmbeddingModel(model.id);
    const engine = await deps.models.engine(model, embeds ? {} : loadOverrides(model, body.options), keepAliveOf(deps, model, body.keep_alive));
    const loaded = performance.now();
    const truncate = body.truncate !== false;
    const results = [];
    for (const input of inputs) {
      try {
        results.push(await engine.embed(input, { truncate }));
      } catch (error) {
        if (error instanceof EngineError && error.code === "context_overflow") throw badRequest("the input length exceeds the context length", "input");
        throw error;
      }
    }
    const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
    c.set("usage", { promptTokens: tokens, completionTokens: 0 });
    const embeddings = results.map((r) => shorten(r.embedding, body.dimensions));
    if (embeddings.some((vector) => vector.some((v) => !Number.isFinite(v)))) throw new EngineError("engine_failure", "embedding contains NaN or Inf values");
    const metrics = metricsFields({ arrived, loaded });
    return c.json({
      model: name, embeddings,
      ...(metrics.total_duration ? { total_duration: metrics.total_duration } : {}),
      ...(metrics.load_duration ? { load_duration: metrics.load_duration } : {}),
      ...(tokens ? { prompt_eval_count: tokens } : {}),
    });
  };
}
