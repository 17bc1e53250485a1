// Tokenizer access through a model's llama_vocab (owned by the model; what is built beside it, the
// groups of tokens by their first characters, is freed with the model).
import { ptr, toArrayBuffer, type Pointer } from "bun:ffi";
import type { Native } from "./symbols.ts";
import { asPointer } from "./pointer.ts";

export interface TokenizeOptions {
  /** Add BOS/EOS as the model's vocabulary asks (true for a fresh prompt). */
  addSpecial?: boolean;
  /** Turn special-token text such as "<|im_start|>" into control tokens (true for rendered chat templates). */
  parseSpecial?: boolean;
}

export class LlamaVocab {
  private pieceBuffer = new Uint8Array(256);
  /** The shim's groups of tokens by their first one and two characters (llamux_prefix_groups), built on first use; null: not built. */
  private groups: Pointer | null = null;
  readonly size: number;
  readonly bos: number;
  readonly eos: number;
  readonly eot: number;
  readonly addBos: boolean;
  readonly sep: number;
  readonly addEos: boolean;
  readonly addSep: boolean;
  /** llama_vocab_type: SPM, BPE, WPM, UGM, RWKV, … */
  readonly type: number;

  constructor(private readonly n: Native, private readonly vocab: Pointer) {
    const l = n.llama;
    this.size = l.llama_vocab_n_tokens(vocab);
    this.bos = l.llama_vocab_bos(vocab);
    this.eos = l.llama_vocab_eos(vocab);
    this.eot = l.llama_vocab_eot(vocab);
    this.addBos = l.llama_vocab_get_add_bos(vocab);
    this.sep = l.llama_vocab_sep(vocab);
    this.addEos = l.llama_vocab_get_add_eos(vocab);
    this.addSep = l.llama_vocab_get_add_sep(vocab);
    this.type = l.llama_vocab_type(vocab);
  }

  get pointer(): Pointer {
    return this.vocab;
  }

  /**
   * The tokens grouped by their first one and two characters, which lets a grammar rule out whole groups at once
   * (ffi/shim.c, grammar_apply_grouped). Built on first use (tens of milliseconds for a 150k vocabulary)
   * and kept until the model is freed; null when the shim could not allocate it.
   */
  prefixGroups(): Pointer | null {
    this.groups ??= asPointer(this.n.shim.llamux_prefix_groups_new(this.vocab));
    return this.groups;
  }

  /** Frees what was built beside the vocabulary: its model calls this as it frees it. */
  release(): void {
    if (this.groups) this.n.shim.llamux_prefix_groups_free(this.groups);
    this.groups = null;
  }

  /** Tokens the model must never produce (tokenizer.ggml.suppress_tokens): llama.cpp's common sampler biases them to -inf. */
  suppressTokens(): number[] {
    const count = new Int32Array(1);
    const list = this.n.llama.llama_vocab_get_suppress_tokens(this.vocab, ptr(count));
    if (!list || count[0]! <= 0) return [];
    return Array.from(new Int32Array(toArrayBuffer(list as Pointer, 0, count[0]! * 4).slice(0)));
  }

  tokenize(text: string, { addSpecial = true, parseSpecial = false }: TokenizeOptions = {}): Int32Array {
    const bytes = Buffer.from(text, "utf8");
    const source = bytes.length > 0 ? bytes : new Uint8Array(1); // bun:ffi rejects empty buffers
    let tokens = new Int32Array(bytes.length + 8);
    let n = this.n.llama.llama_tokenize(this.vocab, ptr(source), bytes.length, ptr(tokens), tokens.length, addSpecial, parseSpecial);
    if (n < 0) {
      tokens = new Int32Array(-n);
      n = this.n.llama.llama_tokenize(this.vocab, ptr(source), bytes.length, ptr(tokens), tokens.length, addSpecial, parseSpecial);
    }
    if (n < 0) throw new RangeError(`Cannot tokenize text of ${bytes.length} bytes: llama_tokenize returned ${n}`);
    return tokens.slice(0, n);
  }

  /** The raw bytes of one token; a UTF-8 character may be split across tokens (see Utf8PieceDecoder). */
  tokenToPiece(token: number, special = false): Uint8Array {
    let n = this.n.llama.llama_token_to_piece(this.vocab, token, ptr(this.pieceBuffer), this.pieceBuffer.length, 0, special);
    if (n < 0) {
      this.pieceBuffer = new Uint8Array(-n);
      n = this.n.llama.llama_token_to_piece(this.vocab, token, ptr(this.pieceBuffer), this.pieceBuffer.length, 0, special);
    }
    return this.pieceBuffer.slice(0, Math.max(0, n));
  }

  detokenize(tokens: ArrayLike<number>, { removeSpecial = false, unparseSpecial = true } = {}): string {
    if (tokens.length === 0) return "";
    const input = Int32Array.from(tokens);
    let out = new Uint8Array(tokens.length * 8 + 16);
    let n = this.n.llama.llama_detokenize(this.vocab, ptr(input), input.length, ptr(out), out.length, removeSpecial, unparseSpecial);
    if (n < 0) {
      out = new Uint8Array(-n);
      n = this.n.llama.llama_detokenize(this.vocab, ptr(input), input.length, ptr(out), out.length, removeSpecial, unparseSpecial);
    }
    return new TextDecoder().decode(out.subarray(0, Math.max(0, n)));
  }

  /** A token's text as the vocabulary stores it (not detokenized). */
  text(token: number): string {
    return String(this.n.llama.llama_vocab_get_text(this.vocab, token) ?? "");
  }

  /** End of generation: EOS, EOT or any other token the vocabulary marks as ending a turn. */
  isEndOfGeneration(token: number): boolean {
    return this.n.llama.llama_vocab_is_eog(this.vocab, token);
  }

  isControl(token: number): boolean {
    return this.n.llama.llama_vocab_is_control(this.vocab, token);
  }
}
