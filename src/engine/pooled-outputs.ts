// What embedding and reranking models produce: a pooled vector of one text, or a score per query and
// document pair. Each input is decoded on its own sequences of the engine's context and cleared after,
// outside the scheduler's generating sequences (an embedding or reranking engine generates nothing).
import { DecodeStatus, TokenBatch, type LlamaContext, type LlamaModel } from "../../ffi/llama.ts";
import { EngineError, type EmbedResult, type RankResult } from "./types.ts";

/**
 * L2-normalised pooled embedding of one text, its token count, and the vector's length before normalising
 * (callers that want the raw vector scale it back). With `truncate`, an input longer than the embedding
 * batch keeps its first tokens instead of failing.
 */
export function embedText(model: LlamaModel, context: LlamaContext, text: string, truncate: boolean): EmbedResult {
  let tokens = model.vocab.tokenize(text, { addSpecial: true, parseSpecial: false });
  if (truncate && tokens.length > context.batchSize) tokens = tokens.slice(0, context.batchSize);
  if (tokens.length > context.batchSize) {
    throw new EngineError("context_overflow", `Input of ${tokens.length} tokens exceeds the embedding batch of ${context.batchSize} tokens`);
  }
  const batch = new TokenBatch(Math.max(1, tokens.length));
  tokens.forEach((token, i) => batch.add(token, i, 0, true));
  context.clearSequence(0);
  const status = context.decode(batch);
  const vector = status === DecodeStatus.ok ? context.sequenceEmbedding(0) : undefined;
  context.clearSequence(0);
  if (!vector) throw new EngineError("engine_failure", `Cannot embed input: llama_decode returned ${status}`);
  const norm = Math.hypot(...vector) || 1;
  return { embedding: Array.from(vector, (v) => v / norm), tokens: tokens.length, norm };
}

/**
 * A reranker's score of each document against the query. Each pair is laid out as llama-server does:
 * the model's "rerank" template with {query} and {document} when its GGUF has one, else
 * [BOS] query [EOS] [SEP] document [EOS] (each as the vocabulary asks). Pairs are decoded together,
 * one sequence each, as many per llama_decode as the context's sequences and batch allow; a pair longer
 * than `limit` tokens is refused.
 */
export function rankDocuments(model: LlamaModel, context: LlamaContext, limit: number, query: string, documents: string[]): RankResult {
  const pairs = documents.map((document, index) => {
    const tokens = rankPairTokens(model, query, document);
    if (tokens.length > limit) {
      throw new EngineError("context_overflow", `Query and document ${index} make ${tokens.length} tokens, more than the reranker's input of ${limit} tokens`);
    }
    return tokens;
  });
  const scores: number[] = new Array(pairs.length);
  const batch = new TokenBatch(context.batchSize);
  for (let next = 0; next < pairs.length;) {
    batch.clear();
    const first = next;
    while (next < pairs.length && next - first < context.sequences && batch.free >= pairs[next]!.length) {
      const seq = next - first;
      pairs[next]!.forEach((token, i) => batch.add(token, i, seq, true));
      next++;
    }
    const status = context.decode(batch);
    for (let i = first; i < next; i++) {
      const score = status === DecodeStatus.ok ? context.sequenceScores(i - first)?.[0] : undefined;
      context.clearSequence(i - first);
      if (score === undefined) throw new EngineError("engine_failure", `Cannot score document ${i}: llama_decode returned ${status}`);
      scores[i] = score;
    }
  }
  return { scores, tokens: pairs.map((p) => p.length) };
}

function rankPairTokens(model: LlamaModel, query: string, document: string): Int32Array {
  const vocab = model.vocab;
  const template = model.chatTemplate("rerank");
  if (template !== undefined) {
    const prompt = template.replaceAll("{query}", query).replaceAll("{document}", document);
    return vocab.tokenize(prompt, { addSpecial: false, parseSpecial: true });
  }
  const plain = (text: string) => Array.from(vocab.tokenize(text, { addSpecial: false, parseSpecial: false }));
  const eos = vocab.eos >= 0 ? vocab.eos : vocab.sep;
  return Int32Array.from([
    ...(vocab.addBos && vocab.bos >= 0 ? [vocab.bos] : []),
    ...plain(query),
    ...(vocab.addEos && eos >= 0 ? [eos] : []),
    ...(vocab.addSep && vocab.sep >= 0 ? [vocab.sep] : []),
    ...plain(document),
    ...(vocab.addEos && eos >= 0 ? [eos] : []),
  ]);
}
