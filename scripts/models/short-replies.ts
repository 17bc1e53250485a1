// Random weights that answer in a few ordinary words and then end the turn, under any sampler (greedy,
// top-k, the full vocabulary at temperature 1): coding agents send replies a max_tokens of 32,000, and
// a plain random model would fill all of it with noise before its end-of-turn token came up.
//
// Every token embedding carries one large constant component, so the hidden state that reaches the
// output head points the same way at every position whatever the layers add. Along that direction the
// head scores the end-of-turn token above a few dozen word tokens, and every other token far below
// them, so sampling picks among the words and ends after a handful.
import { GgmlType, type GgufTensorInput, float32ToFloat16Bits } from "../../src/store/gguf.ts";
import type { BuiltTokenizer } from "./tokenizers.ts";
import { randomTensor } from "./weights.ts";

export interface ShortReplies {
  /** The words a reply is made of (each must be one token of the vocabulary, after a space). */
  words: string[];
  /** The token that ends the turn. */
  endToken: string;
  /**
   * Its output weight along the constant direction (the words' is 0): with 32 words, 0.15 ends a reply
   * after about ten of them on average at temperatures from 0.8 to 1, top-k or not.
   */
  endWeight: number;
}

/** The constant every embedding has in dimension 0: far above the random part (std 0.02). */
const EMBEDDING_OFFSET = 1;
/** The output weight along dimension 0 of every token that is neither a word nor the end token. */
const OTHER_WEIGHT = -3;

/** A random F16 tensor, read whole so that single elements can be set. */
function randomHalfs(seedKey: string, name: string, shape: number[]): Uint16Array {
  const out = new Uint16Array(shape[0]! * shape[1]!);
  let at = 0;
  randomTensor(seedKey, name, shape).write!({
    write(chunk) {
      out.set(new Uint16Array(chunk.buffer, chunk.byteOffset, chunk.byteLength / 2), at);
      at += chunk.byteLength / 2;
    },
  });
  return out;
}

/** token_embd.weight and output.weight ([nEmbd, nVocab] each) that make replies short. */
export function shortReplyTensors(seedKey: string, nEmbd: number, tokenizer: BuiltTokenizer, replies: ShortReplies): GgufTensorInput[] {
  const nVocab = tokenizer.vocabSize;
  const embeddings = randomHalfs(seedKey, "token_embd.weight", [nEmbd, nVocab]);
  const offset = float32ToFloat16Bits(EMBEDDING_OFFSET);
  for (let token = 0; token < nVocab; token++) embeddings[token * nEmbd] = offset;

  const output = randomHalfs(seedKey, "output.weight", [nEmbd, nVocab]);
  const words = new Set(replies.words.map((word) => tokenizer.idOf(`\u0120${word}`)));
  const end = tokenizer.idOf(replies.endToken);
  const other = float32ToFloat16Bits(OTHER_WEIGHT);
  for (let token = 0; token < nVocab; token++) {
    if (token === end) output[token * nEmbd] = float32ToFloat16Bits(replies.endWeight);
    else if (words.has(token)) output[token * nEmbd] = 0;
    else output[token * nEmbd] = other;
  }
  return [
    { name: "token_embd.weight", shape: [nEmbd, nVocab], type: GgmlType.F16, data: embeddings },
    { name: "output.weight", shape: [nEmbd, nVocab], type: GgmlType.F16, data: output },
  ];
}
