// A loaded GGUF model: weights, metadata and vocabulary.
import { ptr, type Pointer } from "bun:ffi";
import { existsSync } from "node:fs";
import { loadNative, withLlamaError } from "./native.ts";
import { StructBuffer, modelParamsLayout } from "./layouts.ts";
import { NativeHandle } from "./disposable.ts";
import { LlamaVocab } from "./vocab.ts";
import { cstr, readCString, readIntoBuffer } from "./strings.ts";
import type { Native } from "./symbols.ts";
import { asPointer } from "./pointer.ts";

export interface ModelLoadOptions {
  /** Layers to offload to the GPU; -1 offloads all, 0 keeps the model on the CPU. Default: 0. */
  gpuLayers?: number;
  /** Map the file instead of reading it into memory. Default: true. */
  mmap?: boolean;
  /** Load only the vocabulary and metadata (for tokenizer work). Default: false. */
  vocabOnly?: boolean;
}

const LOAD_MODE_NONE = 0;
const LOAD_MODE_MMAP = 1;

export class LlamaModel extends NativeHandle {
  readonly vocab: LlamaVocab;
  private constructor(private readonly n: Native, pointer: Pointer, readonly path: string) {
    super(pointer, `model "${path}"`);
    this.vocab = new LlamaVocab(n, asPointer(n.llama.llama_model_get_vocab(pointer))!);
  }

  static load(path: string, options: ModelLoadOptions = {}): LlamaModel {
    if (!existsSync(path)) throw new Error(`Cannot load model "${path}": file does not exist`);
    const n = loadNative();
    const params = new StructBuffer(modelParamsLayout);
    n.shim.llamux_model_default_params(params.pointer);
    params.set("n_gpu_layers", options.gpuLayers ?? 0);
    params.set("load_mode", options.mmap === false ? LOAD_MODE_NONE : LOAD_MODE_MMAP);
    params.set("vocab_only", options.vocabOnly ?? false);
    const { result: pointer, error } = withLlamaError(() => asPointer(n.shim.llamux_model_load(cstr(path), params.pointer)));
    if (!pointer) throw new Error(`Cannot load model "${path}": ${error ?? "llama.cpp rejected the file"}`);
    return new LlamaModel(n, pointer, path);
  }

  protected free(pointer: Pointer): void {
    this.vocab.release();
    this.n.llama.llama_model_free(pointer);
  }

  get pointer(): Pointer {
    return this.handle;
  }

  /** Any GGUF metadata value as a string, e.g. "general.architecture". */
  metadata(key: string): string | undefined {
    const k = cstr(key);
    return readIntoBuffer((buf, size) => this.n.llama.llama_model_meta_val_str(this.handle, k, ptr(buf), size));
  }

  allMetadata(): Record<string, string> {
    const out: Record<string, string> = {};
    const count = this.n.llama.llama_model_meta_count(this.handle);
    for (let i = 0; i < count; i++) {
      const key = readIntoBuffer((buf, size) => this.n.llama.llama_model_meta_key_by_index(this.handle, i, ptr(buf), size));
      const value = readIntoBuffer((buf, size) => this.n.llama.llama_model_meta_val_str_by_index(this.handle, i, ptr(buf), size), 1024);
      if (key !== undefined) out[key] = value ?? "";
    }
    return out;
  }

  get architecture(): string { return this.metadata("general.architecture") ?? "unknown"; }
  get description(): string { return readIntoBuffer((buf, size) => this.n.llama.llama_model_desc(this.handle, ptr(buf), size)) ?? ""; }
  get trainedContextLength(): number { return this.n.llama.llama_model_n_ctx_train(this.handle); }
  get embeddingSize(): number { return this.n.llama.llama_model_n_embd(this.handle); }
  get layerCount(): number { return this.n.llama.llama_model_n_layer(this.handle); }
  get parameterCount(): number { return Number(this.n.llama.llama_model_n_params(this.handle)); }
  get sizeBytes(): number { return Number(this.n.llama.llama_model_size(this.handle)); }
  /** Bytes of F16 K and V cache one token takes over all layers (an upper bound for hybrid models). */
  get kvCacheBytesPerToken(): number {
    const heads = this.n.llama.llama_model_n_head(this.handle) || 1;
    const kvHeads = this.n.llama.llama_model_n_head_kv(this.handle) || heads;
    const headSize = this.embeddingSize / heads;
    return 2 * 2 * this.layerCount * kvHeads * headSize;
  }
  get hasEncoder(): boolean { return this.n.llama.llama_model_has_encoder(this.handle); }
  get hasDecoder(): boolean { return this.n.llama.llama_model_has_decoder(this.handle); }
  /** Recurrent or hybrid memory cannot be partly rolled back; prefix reuse must respect that. */
  get isRecurrentOrHybrid(): boolean {
    return this.n.llama.llama_model_is_recurrent(this.handle) || this.n.llama.llama_model_is_hybrid(this.handle);
  }

  chatTemplate(name?: string): string | undefined {
    const p = asPointer(this.n.llama.llama_model_chat_template(this.handle, name ? cstr(name) : null));
    return readCString(p);
  }
}
