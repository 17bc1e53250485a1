// The one rerank path behind /rerank, /v1/rerank, /v2/rerank and /score: checks the model is a reranker,
// bounds the request, and asks the engine for a score per query+document pair (batched in the engine).
import { EngineError } from "../../engine/types.ts";
import { ApiError, badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import type { KeepAliveRequest } from "../model-service.ts";

/** Most documents (or /score pairs) one request may score. */
export const MAX_RERANK_DOCUMENTS = 1000;
/** Most characters in one document or query (each pair must also fit the reranker's input, usually 512 tokens). */
export const MAX_RERANK_TEXT_CHARS = 100_000;

export interface RerankScores {
  modelId: string;
  /** Score of each document, in the order given. */
  scores: number[];
  /** Tokens of every query+document pair together. */
  tokens: number;
}

function checkText(text: string, field: string): void {
  if (text.length > MAX_RERANK_TEXT_CHARS) throw badRequest(`"${field}" has ${text.length} characters, more than the limit of ${MAX_RERANK_TEXT_CHARS}`, field);
}

/**
 * Scores each (query, document) pair with the named reranker. `pairs` holds one query per document
 * (the same query for /rerank; /score may pair texts one to one).
 */
export async function scorePairs(
  deps: ServerDeps, modelName: string | undefined, queries: string[], documents: string[], keepAlive?: KeepAliveRequest,
  fields = { query: "query", documents: "documents" },
): Promise<RerankScores> {
  if (documents.length === 0) throw badRequest(`"${fields.documents}" must not be empty`, fields.documents);
  if (documents.length > MAX_RERANK_DOCUMENTS) {
    throw badRequest(`"${fields.documents}" has ${documents.length} entries, more than the limit of ${MAX_RERANK_DOCUMENTS}`, fields.documents);
  }
  queries.forEach((q) => checkText(q, fields.query));
  documents.forEach((d, i) => checkText(d, `${fields.documents}[${i}]`));
  const model = deps.models.resolve(modelName);
  if (!deps.models.reranks(model)) {
    throw badRequest(`Model "${model.id}" is not a reranker: reranking needs a cross-encoder whose GGUF declares rank pooling (a classifier head)`, "model");
  }
  const engine = await deps.models.engine(model, {}, keepAlive);
  // One engine call per distinct query, so /rerank's documents are decoded together.
  const scores: number[] = new Array(documents.length);
  let tokens = 0;
  const byQuery = new Map<string, number[]>();
  documents.forEach((_, i) => {
    const query = queries.length === 1 ? queries[0]! : queries[i]!;
    byQuery.set(query, [...(byQuery.get(query) ?? []), i]);
  });
  for (const [query, indexes] of byQuery) {
    let result;
    try {
      result = await engine.rank(query, indexes.map((i) => documents[i]!));
    } catch (error) {
      if (error instanceof EngineError && error.code === "context_overflow") {
        // Name the request's own index, not the engine's position within this query's group.
        const at = /document (\d+)/.exec(error.message);
        const index = at ? indexes[Number(at[1])] : undefined;
        throw new ApiError(400, index !== undefined ? error.message.replace(/document \d+/, `${fields.documents}[${index}]`) : error.message, { param: fields.documents, cause: error });
      }
      throw error;
    }
    indexes.forEach((docIndex, k) => (scores[docIndex] = result.scores[k]!));
    tokens += result.tokens.reduce((a, b) => a + b, 0);
  }
  if (scores.some((s) => !Number.isFinite(s))) throw new EngineError("engine_failure", "reranker returned a NaN or infinite score");
  return { modelId: model.id, scores, tokens };
}
