// A vision projector (libmtmd's mtmd_context) bound to a loaded text model: it turns image files into
// bitmaps, prompts with media markers into text and image chunks, images into embeddings, and
// decodes those embeddings into a sequence of the model's context.
import { ptr, toArrayBuffer, type Pointer } from "bun:ffi";
import { existsSync } from "node:fs";
import { loadNative, withLlamaError } from "./native.ts";
import { libraryDir } from "./library-dir.ts";
import { openMtmd, type MtmdNative } from "./symbols.ts";
import { StructBuffer, mtmdContextParamsLayout, mtmdInputTextLayout, mtmdLayouts, verifyLayouts } from "./layouts.ts";
import { NativeHandle } from "./disposable.ts";
import { asPointer } from "./pointer.ts";
import { cstr } from "./strings.ts";
import { MtmdBitmap, takeChunks, type MtmdChunk, type PromptChunk } from "./mtmd-chunks.ts";
import type { LlamaModel } from "./model.ts";
import type { LlamaContext } from "./context.ts";

import { AudioGenerator, generatedAudioInfo, type GeneratedAudioInfo } from "./speech.ts";

export { MtmdBitmap, MtmdChunk, type PromptChunk } from "./mtmd-chunks.ts";
export { AudioGenerator, type GeneratedAudioInfo, type SpeechPipeline } from "./speech.ts";

let mtmdNative: MtmdNative | undefined;

function loadMtmd(): MtmdNative {
  if (mtmdNative) return mtmdNative;
  const llama = loadNative();
  const opened = openMtmd(libraryDir());
  const reported = new Map<string, number>();
  const count = opened.shim.llamux_mtmd_layout_count();
  for (let i = 0; i < count; i++) reported.set(String(opened.shim.llamux_mtmd_layout_name(i)), Number(opened.shim.llamux_mtmd_layout_value(i)));
  verifyLayouts(reported, mtmdLayouts);
  // libmtmd logs on its own channel; route it through the same forwarder as llama.cpp's log.
  opened.mtmd.mtmd_helper_log_set(llama.shim.llamux_log_forwarder(), null);
  mtmdNative = opened;
  return opened;
}

export interface ProjectorOptions {
  threads: number;
  /** Run the encoder on the GPU when one is available. Default: false. */
  gpu?: boolean;
  /**
   * The text that stands for one image in a prompt. Unset: libmtmd's default marker, which its
   * audio-generation helper writes when it encodes a reference voice.
   */
  mediaMarker?: string;
}

const MTMD_TOKENIZE_ERRORS: Record<number, string> = { 1: "the number of images does not match the number of media markers", 2: "an image could not be preprocessed" };

export class MtmdContext extends NativeHandle {
  readonly mediaMarker: string;
  /** Floats per embedding token: the text model's input embedding size. */
  private readonly embeddingSize: number;

  private constructor(private readonly n: MtmdNative, pointer: Pointer, readonly path: string, model: LlamaModel) {
    super(pointer, `projector "${path}"`);
    this.mediaMarker = String(n.mtmd.mtmd_get_marker(pointer));
    this.embeddingSize = loadNative().llama.llama_model_n_embd_inp(model.pointer);
  }

  static load(path: string, model: LlamaModel, options: ProjectorOptions): MtmdContext {
    if (!existsSync(path)) throw new Error(`Cannot load projector "${path}": file does not exist`);
    const n = loadMtmd();
    const params = new StructBuffer(mtmdContextParamsLayout);
    n.shim.llamux_mtmd_default_params(params.pointer);
    const marker = options.mediaMarker !== undefined ? cstr(options.mediaMarker) : null;
    params.set("use_gpu", options.gpu ?? false);
    params.set("print_timings", false);
    params.set("n_threads", options.threads);
    if (marker) params.set("media_marker", ptr(marker));
    params.set("warmup", false);
    const { result: pointer, error } = withLlamaError(() => asPointer(n.shim.llamux_mtmd_init(cstr(path), model.pointer, params.pointer)));
    if (!pointer) throw new Error(`Cannot load projector "${path}": ${error ?? "libmtmd rejected the file"}`);
    const context = new MtmdContext(n, pointer, path, model);
    if (!context.supportsVision && !context.supportsAudio && !context.generatedAudio) {
      context.dispose();
      throw new Error(`Cannot load projector "${path}": it has neither a vision nor an audio encoder, nor audio generation`);
    }
    return context;
  }

  protected free(pointer: Pointer): void {
    this.n.mtmd.mtmd_free(pointer);
  }

  /** The projector encodes images. */
  get supportsVision(): boolean {
    return this.n.mtmd.mtmd_support_vision(this.handle);
  }

  /** The projector encodes audio (mtmd_support_audio). */
  get supportsAudio(): boolean {
    return this.n.mtmd.mtmd_support_audio(this.handle);
  }

  /** What the projector generates (a text-to-speech pipeline's audio), or undefined. */
  get generatedAudio(): GeneratedAudioInfo | undefined {
    return generatedAudioInfo(this.n, this.handle);
  }

  /** A generator that speaks through this projector and the backbone's `context` (see ffi/speech.ts). */
  audioGenerator(context: LlamaContext): AudioGenerator {
    return AudioGenerator.create(this.n, context, this.handle, this.embeddingSize);
  }

  /** Samples per second audio is resampled to before encoding (16000 for Whisper-style encoders); -1 without audio. */
  get audioSampleRate(): number {
    return this.n.mtmd.mtmd_get_audio_sample_rate(this.handle);
  }

  /** Decodes an audio file (WAV, MP3, FLAC: what miniaudio reads) into mono samples at the projector's rate; throws if it is not one. */
  audioFromFile(bytes: Uint8Array): MtmdBitmap {
    if (bytes.length === 0) throw new Error("Cannot decode audio: it is empty");
    if (!this.supportsAudio) throw new Error(`Cannot decode audio: projector "${this.path}" has no audio encoder`);
    const { result, error } = withLlamaError(() => asPointer(this.n.shim.llamux_mtmd_audio_from_buf(this.handle, ptr(bytes), bytes.length)));
    if (!result) throw new Error(`Cannot decode audio: ${error ?? "not a WAV, MP3 or FLAC file libmtmd reads"}`);
    return new MtmdBitmap(this.n, result);
  }

  /**
   * How many samples audioFromFile would allocate for an audio file, as miniaudio (its decoder) reads
   * the length from the file's header, without decoding the samples; undefined when no decoder reads it.
   */
  audioDecodedFrames(bytes: Uint8Array): number | undefined {
    if (bytes.length === 0 || !this.supportsAudio) return undefined;
    const out = new BigUint64Array(1);
    const ok = this.n.shim.llamux_audio_decoded_frames(ptr(bytes), bytes.length, this.audioSampleRate, ptr(out));
    return ok ? Number(out[0]!) : undefined;
  }

  /** M-RoPE models place an image's tokens on a grid: it takes fewer positions than tokens. */
  get usesMrope(): boolean {
    return this.n.mtmd.mtmd_decode_use_mrope(this.handle);
  }

  /** Decodes an image file (JPEG, PNG, BMP, GIF: what stb_image reads); throws if it is not one. */
  imageFromFile(bytes: Uint8Array): MtmdBitmap {
    if (bytes.length === 0) throw new Error("Cannot decode image: it is empty");
    const { result, error } = withLlamaError(() => asPointer(this.n.shim.llamux_mtmd_image_from_buf(this.handle, ptr(bytes), bytes.length)));
    if (!result) throw new Error(`Cannot decode image: ${error ?? "not an image format libmtmd reads"}`);
    return new MtmdBitmap(this.n, result);
  }

  /**
   * An image file's width and height as stb_image (the decoder imageFromFile uses) reads them from its
   * header, without decoding it; undefined when stb_image cannot read the header.
   */
  imageFileSize(bytes: Uint8Array): { width: number; height: number } | undefined {
    if (bytes.length === 0 || bytes.length > 0x7fffffff) return undefined;
    const out = new Int32Array(3);
    const ok = this.n.mtmd.stbi_info_from_memory(ptr(bytes), bytes.length, ptr(out, 0), ptr(out, 4), ptr(out, 8));
    // stb_image keeps sizes unsigned; a BMP's height is signed (negative: rows top-down) and its loader takes abs().
    return ok ? { width: out[0]! >>> 0, height: Math.abs(out[1]!) } : undefined;
  }

  /** A bitmap from raw RGB pixels (images decoded outside libmtmd), identified by `id`. */
  imageFromRgb(width: number, height: number, rgb: Uint8Array, id: string): MtmdBitmap {
    if (rgb.length !== width * height * 3) throw new RangeError(`Cannot make a ${width}x${height} bitmap from ${rgb.length} bytes`);
    const pointer = asPointer(this.n.mtmd.mtmd_bitmap_init(width, height, ptr(rgb)));
    if (!pointer) throw new Error(`Cannot make a ${width}x${height} bitmap`);
    const bitmap = new MtmdBitmap(this.n, pointer);
    this.n.mtmd.mtmd_bitmap_set_id(pointer, cstr(id));
    return bitmap;
  }

  /** Splits a prompt at its media markers into text tokens and one image chunk per bitmap, in order. */
  tokenize(text: string, bitmaps: MtmdBitmap[], options: { addSpecial: boolean; parseSpecial: boolean }): PromptChunk[] {
    const bytes = cstr(text);
    const input = new StructBuffer(mtmdInputTextLayout);
    input.set("text", ptr(bytes));
    input.set("text_len", bytes.length - 1);
    input.set("add_special", options.addSpecial);
    input.set("parse_special", options.parseSpecial);
    const pointers = new BigUint64Array(Math.max(1, bitmaps.length));
    bitmaps.forEach((b, i) => (pointers[i] = BigInt(b.pointer)));
    const list = asPointer(this.n.mtmd.mtmd_input_chunks_init())!;
    const { result: status, error } = withLlamaError(() => this.n.mtmd.mtmd_tokenize(this.handle, list, input.pointer, ptr(pointers), bitmaps.length));
    if (status !== 0) {
      this.n.mtmd.mtmd_input_chunks_free(list);
      throw new Error(`Cannot tokenize the prompt with its images: ${MTMD_TOKENIZE_ERRORS[status] ?? error ?? `status ${status}`}`);
    }
    return takeChunks(this.n, list);
  }

  /** Runs the vision encoder and projector over an image chunk; returns its embeddings (a copy). */
  encode(chunk: MtmdChunk): Float32Array {
    const { result: status, error } = withLlamaError(() => this.n.mtmd.mtmd_encode_chunk(this.handle, chunk.pointer));
    if (status !== 0) throw new Error(`Cannot encode image: ${error ?? `status ${status}`}`);
    const out = asPointer(this.n.mtmd.mtmd_get_output_embd(this.handle))!;
    return new Float32Array(toArrayBuffer(out, 0, chunk.tokenCount * this.embeddingSize * 4).slice(0));
  }

  /**
   * Decodes an image's embeddings into sequence `seq` from position `position`, in micro-batches of
   * `batchSize`. Returns the position after the image. Overwrites the context's last logits.
   */
  decodeImage(context: LlamaContext, chunk: MtmdChunk, embeddings: Float32Array, position: number, seq: number, batchSize: number): number {
    if (embeddings.length !== chunk.tokenCount * this.embeddingSize) {
      throw new RangeError(`Cannot decode image: ${embeddings.length} floats for ${chunk.tokenCount} tokens of ${this.embeddingSize}`);
    }
    const next = new Int32Array(1);
    const { result: status, error } = withLlamaError(() =>
      this.n.mtmd.mtmd_helper_decode_image_chunk(this.handle, context.pointer, chunk.pointer, ptr(embeddings), position, seq, batchSize, ptr(next), null, null));
    if (status !== 0) throw new Error(`Cannot decode image into sequence ${seq}: ${error ?? `status ${status}`}`);
    return next[0]!;
  }
}
