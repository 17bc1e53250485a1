// POST /rerank, /v1/rerank, /v2/rerank (vLLM's Jina/Cohere-style reranking) and /score, /v1/score
// (vLLM's cross-encoder scoring), thin translations around scorePairs.
//   rerank  {model, query, documents: (string | {text})[], top_n?, return_documents?}
//        → {id, model, usage: {prompt_tokens, total_tokens}, results: [{index, relevance_score, document?: {text}}]}
//          sorted by relevance_score, highest first; top_n (0 or absent: all) keeps the first N.
//          /rerank and /v1/rerank return documents unless return_documents is false (vLLM, Jina);
//          /v2/rerank follows Cohere: documents only when return_documents is true, plus Cohere's `meta`.
//   score   {model, text_1: string | string[], text_2: string | string[]}
//        → {id, object: "list", created, model, data: [{index, object: "score", score}], usage}
//          one text_1 scores against every text_2; lists of equal length pair one to one.
// Both take vLLM's use_activation: scores through a sigmoid (profile b's default) or raw (score-activation.ts).
import { newId } from "../../ids.ts";
import type { Context } from "hono";
import { z } from "zod";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { ttlField, ttlKeepAlive } from "../ttl.ts";
import { readJsonBody, validate } from "../validation.ts";
import { scorePairs } from "./rerank-core.ts";
import { activateScores, useActivationField } from "./score-activation.ts";

const documentSchema = z.union([z.string(), z.looseObject({ text: z.string() })]);

export const rerankSchema = z.object({
  model: z.string().nullable().optional(),
  query: z.string().describe("the text documents are ranked against"),
  documents: z.array(documentSchema).describe("texts, or objects with a text field"),
  top_n: z.number().int().min(0).nullable().optional().describe("keep the N best (0 or absent: all)"),
  return_documents: z.boolean().nullable().optional(),
  use_activation: useActivationField,
  ttl: ttlField,
});

const textsSchema = z.union([z.string(), z.array(z.string())]);
export const scoreSchema = z.object({
  model: z.string().nullable().optional(),
  text_1: textsSchema,
  text_2: textsSchema,
  use_activation: useActivationField,
  ttl: ttlField,
});

const documentText = (document: z.infer<typeof documentSchema>) => (typeof document === "string" ? document : document.text);

export function rerank(deps: ServerDeps, { cohere = false } = {}) {
  return async function rerankHandler(c: Context) {
    const body = validate(rerankSchema, await readJsonBody(c));
    const texts = body.documents.map(documentText);
    const { modelId, scores: raw, tokens } = await scorePairs(deps, body.model ?? undefined, [body.query], texts, ttlKeepAlive(deps.profile, body.ttl));
    const scores = activateScores(deps.profile, body.use_activation, raw);
    c.set("usage", { promptTokens: tokens, completionTokens: 0 });
    const withDocuments = body.return_documents ?? !cohere;
    const ranked = scores.map((score, index) => ({ index, score })).sort((a, b) => b.score - a.score || a.index - b.index);
    const kept = body.top_n ? ranked.slice(0, body.top_n) : ranked;
    return c.json({
      id: newId("rerank"),
      model: modelId,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
      results: kept.map(({ index, score }) => ({
        index,
        relevance_score: score,
        ...(withDocuments ? { document: { text: texts[index] } } : {}),
      })),
      ...(cohere ? { meta: { api_version: { version: "2" }, billed_units: { search_units: 1 } } } : {}),
    });
  };
}

export function score(deps: ServerDeps) {
  return async function scoreHandler(c: Context) {
    const body = validate(scoreSchema, await readJsonBody(c));
    const first = typeof body.text_1 === "string" ? [body.text_1] : body.text_1;
    const second = typeof body.text_2 === "string" ? [body.text_2] : body.text_2;
    if (first.length === 0) throw badRequest(`"text_1" must not be empty`, "text_1");
    if (first.length !== 1 && first.length !== second.length) {
      throw badRequest(`"text_1" has ${first.length} texts and "text_2" ${second.length}: give one text_1, or as many as text_2`, "text_2");
    }
    const { modelId, scores: raw, tokens } = await scorePairs(deps, body.model ?? undefined, first, second, ttlKeepAlive(deps.profile, body.ttl), { query: "text_1", documents: "text_2" });
    const scores = activateScores(deps.profile, body.use_activation, raw);
    c.set("usage", { promptTokens: tokens, completionTokens: 0 });
    return c.json({
      id: newId("score"),
      object: "list",
      created: Math.floor(Date.now() / 1000),
      model: modelId,
      data: scores.map((value, index) => ({ index, object: "score", score: value })),
      usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 },
    });
  };
}
