// Token ids from a request are checked against the vocabulary before anything native sees them:
// llama.cpp aborts the whole engine process on an id outside it (token_to_piece, is_eog), and
// llama_decode fails the whole batch, every other sequence included.
import { EngineError, type GenerateRequest } from "./types.ts";

/** The first id that is not a token of a vocabulary of `size` tokens, if any. */
export function firstOutOfVocabulary(ids: ArrayLike<number>, size: number): number | undefined {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (!Number.isInteger(id) || id < 0 || id >= size) return id;
  }
  return undefined;
}

/** Why `ids` cannot be used with a vocabulary of `size` tokens, or undefined when they can. */
export function tokenIdProblem(ids: ArrayLike<number>, size: number, field: string): string | undefined {
  const bad = firstOutOfVocabulary(ids, size);
  if (bad === undefined) return undefined;
  return `Token id ${bad} in ${field} is out of vocabulary: the model has ${size} tokens (ids 0 to ${size - 1})`;
}

/** Throws an invalid_request EngineError when any id is outside the vocabulary. */
export function checkTokenIds(ids: ArrayLike<number>, size: number, field: string): void {
  const problem = tokenIdProblem(ids, size, field);
  if (problem) throw new EngineError("invalid_request", problem);
}

/** Every token id a generate request carries: a token prompt, logit biases and stop tokens. */
export function checkRequestTokenIds(request: Omit<GenerateRequest, "id">, size: number): void {
  if (typeof request.prompt !== "string") checkTokenIds(request.prompt, size, "the prompt");
  const biased = request.sampling?.logitBias?.map(([token]) => token);
  if (biased?.length) checkTokenIds(biased, size, "logit_bias");
  if (request.stopTokenIds?.length) checkTokenIds(request.stopTokenIds, size, "stop_token_ids");
  if (request.forcedTokens?.length) checkTokenIds(request.forcedTokens, size, "the forced tokens");
}
