// A per-sequence llama.cpp sampler chain built from plain settings.
import { ptr, type Pointer } from "bun:ffi";
import { loadNative, withLlamaError } from "./native.ts";
import { NativeHandle } from "./disposable.ts";
import { cstr } from "./strings.ts";
import type { LlamaContext } from "./context.ts";
import type { LlamaVocab } from "./vocab.ts";
import type { Native } from "./symbols.ts";
import { asPointer } from "./pointer.ts";
import type { SamplerSettings } from "./sampler-settings.ts";

export type { SamplerSettings };

/** llama.cpp refused a GBNF grammar (syntax error, undefined rule, left recursion, unknown token). */
export class InvalidGrammarError extends SyntaxError {
  constructor(reason: string | undefined) {
    super(`Cannot use grammar: llama.cpp rejected it (${reason ?? "no reason given"})`);
    this.name = "InvalidGrammarError";
  }
}

/** What sample() returns when the chain ruled out every token (a grammar at a dead end). */
export const NO_TOKEN = -1;

export const defaultSamplerSettings: SamplerSettings = {
  temperature: 0.8, seed: 0xffffffff, topK: 40, topP: 0.95, minP: 0.05, typicalP: 1, repeatPenalty: 1, repeatLastN: 64,
  frequencyPenalty: 0, presencePenalty: 0, dryMultiplier: 0, dryBase: 1.75, dryAllowedLength: 2, dryLastN: -1,
  drySequenceBreakers: ["\n", ":", "\"", "*"], xtcProbability: 0, xtcThreshold: 0.1, mirostat: 0, mirostatTau: 5,
  mirostatEta: 0.1, logitBias: [],
};

export class SamplerChain extends NativeHandle {
  /** The grammar, outside the chain: checked on the chain's pick first, applied to every token only when it rejects it. */
  private grammar: Pointer | null = null;
  /** The vocabulary's prefix groups, through which the grammar checks many tokens; null: token by token. */
  private prefixGroups: Pointer | null = null;
  /** Samplers at the chain's head that only change logits (bias, penalties, DRY). */
  private logitSamplers = 0;
  /**
   * k when the sampler after them keeps the k highest candidates (top-k; greedy is k = 1): a rejected pick
   * is then drawn again from the k highest tokens the grammar allows, found without checking the whole
   * vocabulary (the shim's allowed_highest). 0: the grammar is applied to every token.
   */
  private keepsHighest = 0;

  private constructor(private readonly n: Native, pointer: Pointer) {
    super(pointer, "sampler chain");
  }

  /**
   * Chain order follows llama.cpp's common sampler: bias, grammar, penalties, DRY, truncation, temperature, pick.
   * Without top-k (and typical/XTC), truncation, temperature and pick are the shim's one-pass draw
   * (`fullVocabularyDraw: false` keeps llama.cpp's own samplers, the reference the tests compare with).
   * A grammar is checked after the pick, as llama-server does (`grammarFirst: true` puts it in the chain);
   * when it rejects the pick and the chain keeps the k highest candidates, only the highest tokens are
   * checked until k are allowed.
   */
  static create(vocab: LlamaVocab, trainedContext: number, s: SamplerSettings, { fullVocabularyDraw = true, grammarFirst = false } = {}): SamplerChain {
    const n = loadNative();
    const l = n.llama;
    const chain = asPointer(n.shim.llamux_sampler_chain_init(true));
    if (!chain) throw new Error("Cannot build sampler chain: llama.cpp returned no chain");
    let added = 0;
    const add = (created: Pointer | bigint | null) => {
      const sampler = asPointer(created);
      if (!sampler) throw new Error("Cannot build sampler chain: llama.cpp rejected a sampler (invalid grammar?)");
      l.llama_sampler_chain_add(chain, sampler);
      added++;
    };
    const result = new SamplerChain(n, chain);
    try {
      if (s.logitBias.length > 0) {
        const biases = new Uint8Array(8 * s.logitBias.length);
        const view = new DataView(biases.buffer);
        s.logitBias.forEach(([token, bias], i) => {
          view.setInt32(i * 8, token, true);
          view.setFloat32(i * 8 + 4, bias, true);
        });
        add(l.llama_sampler_init_logit_bias(vocab.size, s.logitBias.length, ptr(biases)));
      }
      if (s.grammar) {
        const grammar = s.grammar;
        const { result: created, error } = withLlamaError(() => l.llama_sampler_init_grammar(vocab.pointer, cstr(grammar), cstr("root")));
        if (!asPointer(created)) throw new InvalidGrammarError(error?.replace(/\s+/g, " "));
        if (grammarFirst) add(created);
        else {
          result.grammar = asPointer(created);
          if (!matchesTokenIds(grammar)) result.prefixGroups = vocab.prefixGroups();
        }
      }
      if (s.repeatPenalty !== 1 || s.frequencyPenalty !== 0 || s.presencePenalty !== 0) {
        add(l.llama_sampler_init_penalties(vocab.size, s.repeatLastN, s.repeatPenalty, s.frequencyPenalty, s.presencePenalty));
      }
      if (s.dryMultiplier > 0) {
        const breakers = s.drySequenceBreakers.map(cstr);
        const table = new BigUint64Array(Math.max(1, breakers.length));
        breakers.forEach((b, i) => (table[i] = BigInt(ptr(b))));
        const lastN = s.dryLastN < 0 ? trainedContext : s.dryLastN;
        add(l.llama_sampler_init_dry(vocab.pointer, s.dryMultiplier, s.dryBase, s.dryAllowedLength, lastN, ptr(table), breakers.length));
      }
      result.logitSamplers = added;
      // A temperature too small for a float (5e-324) is 0 to llama.cpp: greedy, as 0 is.
      if (Math.fround(s.temperature) <= 0) {
        result.keepsHighest = 1;
        add(l.llama_sampler_init_greedy());
      } else if (s.mirostat === 1) {
        add(l.llama_sampler_init_temp(s.temperature));
        add(l.llama_sampler_init_mirostat(vocab.size, s.seed >>> 0, s.mirostatTau, s.mirostatEta, 100));
      } else if (s.mirostat === 2) {
        add(l.llama_sampler_init_temp(s.temperature));
        add(l.llama_sampler_init_mirostat_v2(s.seed >>> 0, s.mirostatTau, s.mirostatEta));
      } else if (fullVocabularyDraw && s.topK <= 0 && s.typicalP >= 1 && s.xtcProbability <= 0) {
        // No top-k: top_p, min_p, temperature and the draw in one native pass, with no sort of the vocabulary.
        add(n.shim.llamux_sampler_init_draw(s.topP, s.minP, s.temperature, s.seed >>> 0));
      } else {
        if (s.topK > 0) {
          result.keepsHighest = s.topK;
          add(l.llama_sampler_init_top_k(s.topK));
        }
        if (s.typicalP < 1) add(l.llama_sampler_init_typical(s.typicalP, 1));
        if (s.topP < 1) add(l.llama_sampler_init_top_p(s.topP, 1));
        if (s.minP > 0) add(l.llama_sampler_init_min_p(s.minP, 1));
        if (s.xtcProbability > 0) add(l.llama_sampler_init_xtc(s.xtcProbability, s.xtcThreshold, 1, s.seed >>> 0));
        add(l.llama_sampler_init_temp(s.temperature));
        add(l.llama_sampler_init_dist(s.seed >>> 0));
      }
    } catch (error) {
      result.dispose();
      throw error;
    }
    return result;
  }

  protected free(pointer: Pointer): void {
    if (this.grammar) this.n.llama.llama_sampler_free(this.grammar);
    this.grammar = null;
    this.n.llama.llama_sampler_free(pointer);
  }

  /**
   * Samples from the logits at batch index `index` and records the token in the chain's history; NO_TOKEN
   * when every candidate was ruled out (llama_sampler_sample would abort the process there).
   */
  sample(context: LlamaContext, index: number): number {
    return this.n.shim.llamux_sampler_sample_grammar(this.handle, this.grammar, this.prefixGroups, this.logitSamplers, this.keepsHighest, context.pointer, index);
  }

  /** The same as sample(), from a copy of a decode's logits (one per vocabulary entry). */
  sampleFrom(logits: Float32Array): number {
    return this.n.shim.llamux_sampler_sample_grammar_logits(this.handle, this.grammar, this.prefixGroups, this.logitSamplers, this.keepsHighest, ptr(logits), logits.length);
  }

  /**
   * Runs the chain over `logits` without accepting anything: the candidates left after its truncation
   * samplers (top-k, top-p, min-p, a grammar's ruled-out tokens keep a -inf logit) and the one it selects.
   */
  candidates(logits: Float32Array): { kept: Array<{ token: number; logit: number }>; selected: number } {
    const entry = 12; // llama_token_data: id, logit, p
    const data = new DataView(new ArrayBuffer(entry * logits.length));
    logits.forEach((logit, i) => {
      data.setInt32(i * entry, i, true);
      data.setFloat32(i * entry + 4, logit, true);
    });
    const array = new DataView(new ArrayBuffer(32)); // llama_token_data_array: data, size, selected, sorted
    array.setBigUint64(0, BigInt(ptr(data)), true);
    array.setBigUint64(8, BigInt(logits.length), true);
    array.setBigInt64(16, -1n, true);
    if (this.grammar) this.n.shim.llamux_grammar_apply(this.grammar, this.prefixGroups, ptr(array));
    this.n.llama.llama_sampler_apply(this.handle, ptr(array));
    const size = Number(array.getBigUint64(8, true));
    const kept = Array.from({ length: size }, (_, i) => ({ token: data.getInt32(i * entry, true), logit: data.getFloat32(i * entry + 4, true) }));
    const selected = Number(array.getBigInt64(16, true));
    return { kept, selected: selected >= 0 && selected < size ? kept[selected]!.token : NO_TOKEN };
  }

  /** Feeds a token into the history of the chain (penalties, DRY) and of the grammar, without sampling. */
  accept(token: number): void {
    if (this.grammar) this.n.llama.llama_sampler_accept(this.grammar, token);
    this.n.llama.llama_sampler_accept(this.handle, token);
  }
}

/**
 * Whether a GBNF grammar matches tokens by id (`<[123]>`, `<|tool_call|>`, `!<...>`): such a rule decides
 * by the token, not its text, which the prefix groups cannot see. Token references are the only
 * `<` and `!` outside string literals, character classes and comments.
 */
export function matchesTokenIds(grammar: string): boolean {
  for (let i = 0; i < grammar.length; i++) {
    const c = grammar[i];
    if (c === "<" || c === "!") return true;
    if (c === "#") {
      while (i < grammar.length && grammar[i] !== "\n" && grammar[i] !== "\r") i++;
    } else if (c === '"' || c === "[") {
      const close = c === '"' ? '"' : "]";
      for (i++; i < grammar.length && grammar[i] !== close; i++) if (grammar[i] === "\\") i++;
    }
  }
  return false;
}
