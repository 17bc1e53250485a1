// Real tokenizers taken from llama.cpp's models/ggml-vocab-*.gguf files, with the special tokens a model family needs.
import { join } from "node:path";
import { GgufValueType, type GgufKv, ggufKv, readGgufHeaderSync } from "../../src/store/gguf.ts";

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const LLAMA_SOURCE_DIR = join(REPO_ROOT, ".native", "llama.cpp");

/** llama.cpp's token types (gguf-py TokenType). */
export enum TokenType {
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}

export type BaseVocab = "qwen2" | "gpt-2" | "bert-bge" | "llama-bpe" | "llama-spm";

export interface AddedToken {
  text: string;
  type: TokenType;
  /** put the token at this id (it must hold a placeholder); appended at the end when absent */
  id?: number;
}

export interface TokenizerSpec {
  base: BaseVocab;
  added?: AddedToken[];
  /** append UNUSED placeholder tokens until the vocabulary has this many entries */
  padTo?: number;
  bos?: string;
  eos?: string;
  padding?: string;
  addBos?: boolean;
  addEos?: boolean;
  chatTemplate?: string;
}

export interface BuiltTokenizer {
  metadata: [string, GgufKv][];
  tokens: string[];
  vocabSize: number;
  idOf(text: string): number;
}

const baseCache = new Map<BaseVocab, Map<string, GgufKv>>();

export function vocabFilePath(base: BaseVocab): string {
  return join(LLAMA_SOURCE_DIR, "models", `ggml-vocab-${base}.gguf`);
}

/** The tokenizer.* keys of a vocab file (read once per process). */
function loadBase(base: BaseVocab): Map<string, GgufKv> {
  let kvs = baseCache.get(base);
  if (!kvs) {
    const header = readGgufHeaderSync(vocabFilePath(base));
    kvs = new Map([...header.metadata].filter(([key]) => key.startsWith("tokenizer.")));
    baseCache.set(base, kvs);
  }
  return kvs;
}

export function buildTokenizer(spec: TokenizerSpec): BuiltTokenizer {
  const base = loadBase(spec.base);
  const tokens = [...(base.get("tokenizer.ggml.tokens")!.value as string[])];
  const types = Array.from(base.get("tokenizer.ggml.token_type")!.value as Int32Array);
  const idByText = new Map<string, number>();
  tokens.forEach((text, id) => idByText.set(text, id));

  for (const token of spec.added ?? []) {
    const existing = idByText.get(token.text);
    if (existing !== undefined) {
      types[existing] = token.type;
      continue;
    }
    let id = token.id;
    if (id === undefined) {
      id = tokens.length;
      tokens.push(token.text);
      types.push(token.type);
    } else {
      idByText.delete(tokens[id]!);
      tokens[id] = token.text;
      types[id] = token.type;
    }
    idByText.set(token.text, id);
  }
  for (let i = 0; spec.padTo !== undefined && tokens.length < spec.padTo; i++) {
    const text = `<|reserved_${i}|>`;
    if (idByText.has(text)) continue;
    idByText.set(text, tokens.length);
    tokens.push(text);
    types.push(TokenType.UNUSED);
  }

  const idOf = (text: string): number => {
    const id = idByText.get(text);
    if (id === undefined) throw new Error(`Token "${text}" is not in the ${spec.base} vocabulary`);
    return id;
  };

  const overrides = new Map<string, GgufKv>([
    ["tokenizer.ggml.tokens", ggufKv.array(GgufValueType.STRING, tokens)],
    ["tokenizer.ggml.token_type", ggufKv.array(GgufValueType.INT32, Int32Array.from(types))],
  ]);
  if (spec.bos) overrides.set("tokenizer.ggml.bos_token_id", ggufKv.uint32(idOf(spec.bos)));
  if (spec.eos) overrides.set("tokenizer.ggml.eos_token_id", ggufKv.uint32(idOf(spec.eos)));
  if (spec.padding) overrides.set("tokenizer.ggml.padding_token_id", ggufKv.uint32(idOf(spec.padding)));
  if (spec.addBos !== undefined) overrides.set("tokenizer.ggml.add_bos_token", ggufKv.bool(spec.addBos));
  if (spec.addEos !== undefined) overrides.set("tokenizer.ggml.add_eos_token", ggufKv.bool(spec.addEos));
  if (spec.chatTemplate !== undefined) overrides.set("tokenizer.chat_template", ggufKv.string(spec.chatTemplate));

  const metadata: [string, GgufKv][] = [];
  for (const [key, kv] of base) {
    if (overrides.has(key) || key === "tokenizer.chat_template") continue; // a vocab file's template is not ours
    if (key === "tokenizer.ggml.scores" && kv.type === GgufValueType.ARRAY && kv.length !== tokens.length) {
      throw new Error(`Cannot extend the ${spec.base} vocabulary: it has per-token scores`);
    }
    metadata.push([key, kv]);
  }
  metadata.push(...overrides);
  return { metadata, tokens, vocabSize: tokens.length, idOf };
}

/** Qwen2.5 puts its Hermes tool tokens at these ids of the qwen2 vocabulary (placeholders in the vocab file). */
export const QWEN_TOKENIZER: TokenizerSpec = {
  base: "qwen2",
  added: [
    // not special in Qwen2.5 (USER_DEFINED): matched as one token in text, and shown when detokenized
    { text: "<tool_call>", type: TokenType.USER_DEFINED, id: 151657 },
    { text: "</tool_call>", type: TokenType.USER_DEFINED, id: 151658 },
  ],
  bos: "<|endoftext|>",
  eos: "<|im_end|>",
  padding: "<|endoftext|>",
  addBos: false,
  addEos: false,
};

/** The LFM2 control tokens, appended to the gpt-2 vocabulary (the llama.cpp source has no LFM2 vocab). */
export function lfm2Tokenizer(padTo?: number): TokenizerSpec {
  const control = (text: string): AddedToken => ({ text, type: TokenType.CONTROL });
  return {
    base: "gpt-2",
    added: [
      control("<|startoftext|>"),
      control("<|im_start|>"),
      control("<|im_end|>"),
      control("<|tool_list_start|>"),
      control("<|tool_list_end|>"),
      control("<|tool_call_start|>"),
      control("<|tool_call_end|>"),
      control("<|tool_response_start|>"),
      control("<|tool_response_end|>"),
      // reasoning tags are plain added tokens in LFM2, so they stay visible in detokenized text
      { text: "<think>", type: TokenType.USER_DEFINED },
      { text: "</think>", type: TokenType.USER_DEFINED },
    ],
    padTo,
    bos: "<|startoftext|>",
    eos: "<|im_end|>",
    addBos: true,
    addEos: false,
  };
}

export const BERT_TOKENIZER: TokenizerSpec = { base: "bert-bge" };

export const LLAMA3_TOKENIZER: TokenizerSpec = {
  base: "llama-bpe",
  bos: "<|begin_of_text|>",
  eos: "<|eot_id|>",
  addBos: true,
  addEos: false,
};
