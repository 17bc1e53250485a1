// What libmtmd hands back: image bitmaps, and a prompt tokenized into text and media chunks.
import { ptr, toArrayBuffer } from "bun:ffi";
import type { Pointer } from "bun:ffi";
import { NativeHandle } from "./disposable.ts";
import { asPointer } from "./pointer.ts";
import { readCString } from "./strings.ts";
import type { MtmdNative } from "./symbols.ts";

const CHUNK_TYPE_TEXT = 0;
const CHUNK_TYPE_IMAGE = 1;
const CHUNK_TYPE_AUDIO = 2;

/** A decoded image (RGB) or audio clip (mono samples) ready for tokenization; its id is a hash of its content. */
export class MtmdBitmap extends NativeHandle {
  constructor(private readonly n: MtmdNative, pointer: Pointer) {
    super(pointer, "image bitmap");
  }

  protected free(pointer: Pointer): void {
    this.n.mtmd.mtmd_bitmap_free(pointer);
  }

  get pointer(): Pointer { return this.handle; }
  get width(): number { return this.n.mtmd.mtmd_bitmap_get_nx(this.handle); }
  get height(): number { return this.n.mtmd.mtmd_bitmap_get_ny(this.handle); }
  get id(): string { return readCString(asPointer(this.n.mtmd.mtmd_bitmap_get_id(this.handle))) ?? ""; }
  /** Audio bitmaps hold mono float samples: width is their count. */
  get isAudio(): boolean { return this.n.mtmd.mtmd_bitmap_is_audio(this.handle); }
}

/** One media chunk of a tokenized prompt, owned on its own (a copy out of the chunk list). */
export class MtmdChunk extends NativeHandle {
  /** Embedding tokens the chunk takes in the sequence (KV cells). */
  readonly tokenCount: number;
  /** Positions it advances the sequence by: fewer than tokenCount for M-RoPE models. */
  readonly positionCount: number;
  /** Content hash of the media (the bitmap's id). */
  readonly id: string;

  constructor(private readonly n: MtmdNative, pointer: Pointer) {
    super(pointer, "media chunk");
    this.tokenCount = Number(n.mtmd.mtmd_input_chunk_get_n_tokens(pointer));
    this.positionCount = n.mtmd.mtmd_input_chunk_get_n_pos(pointer);
    this.id = readCString(asPointer(n.mtmd.mtmd_input_chunk_get_id(pointer))) ?? "";
  }

  protected free(pointer: Pointer): void {
    this.n.mtmd.mtmd_input_chunk_free(pointer);
  }

  get pointer(): Pointer { return this.handle; }
}

export type PromptChunk = { type: "text"; tokens: Int32Array } | { type: "image"; chunk: MtmdChunk };

/** Reads a chunk list into text tokens and owned image chunks, then frees the list. */
export function takeChunks(n: MtmdNative, list: Pointer): PromptChunk[] {
  const out: PromptChunk[] = [];
  try {
    const count = Number(n.mtmd.mtmd_input_chunks_size(list));
    for (let i = 0; i < count; i++) {
      const chunk = asPointer(n.mtmd.mtmd_input_chunks_get(list, i))!;
      const type = n.mtmd.mtmd_input_chunk_get_type(chunk);
      if (type === CHUNK_TYPE_TEXT) {
        const length = new BigUint64Array(1);
        const tokens = asPointer(n.mtmd.mtmd_input_chunk_get_tokens_text(chunk, ptr(length)));
        const count = Number(length[0]);
        out.push({ type: "text", tokens: count > 0 && tokens ? new Int32Array(toArrayBuffer(tokens, 0, count * 4).slice(0)) : new Int32Array(0) });
      } else if (type === CHUNK_TYPE_IMAGE || type === CHUNK_TYPE_AUDIO) {
        // Audio chunks are media like images: embeddings from the encoder, decoded in place.
        out.push({ type: "image", chunk: new MtmdChunk(n, asPointer(n.mtmd.mtmd_input_chunk_copy(chunk))!) });
      } else {
        throw new Error(`Cannot use a media chunk of type ${type}: llamux passes images and audio`);
      }
    }
    return out;
  } catch (error) {
    for (const part of out) if (part.type === "image") part.chunk.dispose();
    throw error;
  } finally {
    n.mtmd.mtmd_input_chunks_free(list);
  }
}
