// A prompt with images, as the scheduler holds it: one token list in which each image takes its
// positions as a run of one negative id (no real token is negative), plus the image chunks themselves.
// The negative ids let prefix reuse compare cached images with a new prompt's images like tokens: the
// id comes from the image's content hash, so the same image in the next turn matches.
import type { MtmdBitmap, MtmdChunk, MtmdContext } from "../../ffi/mtmd.ts";
import { EngineError, type EngineImage } from "./types.ts";
import { MAX_IMAGE_PIXELS } from "../vision/image-size.ts";
import { MAX_AUDIO_SECONDS } from "../audio/audio-limits.ts";
import { audioHeaderLength } from "../audio/audio-duration.ts";

export interface ImageSpan {
  /** Prompt index of the image's first position. */
  start: number;
  /** Positions the image advances the sequence by (fewer than `tokens` for M-RoPE models). */
  positions: number;
  /** Embedding tokens (KV cells) it takes. */
  tokens: number;
  /** The id standing for the image's positions in the token list. */
  marker: number;
  /**
   * What the encoder's cache knows the chunk's embeddings by: the media's content hash and the chunk's
   * place within that media ("" when the media has no hash). libmtmd gives every chunk of one media item
   * its item's hash (each 30-second part of a clip, each slice of a tiled image), so the hash alone does
   * not tell the parts apart.
   */
  cacheKey: string;
  chunk: MtmdChunk;
}

export interface ImagePrompt {
  tokens: Int32Array;
  images: ImageSpan[];
}

/**
 * A negative id from a hex content hash: the same image always gets the same id. An image without a
 * hash gets a random one, so that it never matches another image in a cache.
 */
export function imageMarker(hashHex: string): number {
  const bits = hashHex ? Number.parseInt(hashHex.slice(0, 8), 16) : crypto.getRandomValues(new Uint32Array(1))[0]!;
  return -1 - (bits >>> 1);
}

/**
 * The cache key of each media chunk, in order: `<hash>#<part>`, the part counted within its media item.
 * Copies of one item share its hash and so its chunk count: an item of hash h has (chunks of h) / (items
 * of h) parts, and the n-th chunk of hash h is part n modulo that.
 */
export function mediaCacheKeys(itemIds: string[], chunkIds: string[]): string[] {
  const items = new Map<string, number>();
  for (const id of itemIds) items.set(id, (items.get(id) ?? 0) + 1);
  const chunks = new Map<string, number>();
  for (const id of chunkIds) chunks.set(id, (chunks.get(id) ?? 0) + 1);
  const seen = new Map<string, number>();
  return chunkIds.map((id) => {
    if (!id) return "";
    const index = seen.get(id) ?? 0;
    seen.set(id, index + 1);
    const parts = Math.max(1, Math.round(chunks.get(id)! / (items.get(id) ?? 1)));
    return `${id}#${index % parts}`;
  });
}

function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** Held here as well as where requests arrive: the decoder's own header parse has the last word. */
function checkFileSize(mtmd: MtmdContext, bytes: Uint8Array, index: number): void {
  const size = mtmd.imageFileSize(bytes);
  if (!size) throw new EngineError("invalid_request", `Cannot use image ${index + 1}: its header does not say its width and height`);
  if (size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new EngineError("invalid_request", `Cannot use image ${index + 1}: ${size.width}x${size.height} pixels is more than the ${MAX_IMAGE_PIXELS} allowed`);
  }
}

/**
 * The decoder allocates for the length a file's header states before it decodes a sample: the header
 * (as the request's edge read it) and then miniaudio itself must both state at most the limit.
 */
function checkAudioHeader(mtmd: MtmdContext, bytes: Uint8Array): void {
  const header = audioHeaderLength(bytes);
  if ("problem" in header) throw new Error(header.problem);
  if (header.seconds > MAX_AUDIO_SECONDS) throw new Error(`its header says ${header.seconds.toPrecision(4)} seconds, longer than the ${MAX_AUDIO_SECONDS} allowed`);
  const frames = mtmd.audioDecodedFrames(bytes);
  if (frames === undefined) throw new Error("it is not a WAV, MP3 or FLAC file the decoder reads");
  const seconds = frames / mtmd.audioSampleRate;
  if (seconds > MAX_AUDIO_SECONDS) throw new Error(`the decoder would read ${seconds.toPrecision(4)} seconds from it, longer than the ${MAX_AUDIO_SECONDS} allowed`);
}

/** An audio file's samples as libmtmd decodes them, after the length checks; throws (a plain Error) what is wrong. */
export function audioBitmap(mtmd: MtmdContext, bytes: Uint8Array): MtmdBitmap {
  if (!mtmd.supportsAudio) throw new Error(`projector "${mtmd.path}" has no audio encoder`);
  checkAudioHeader(mtmd, bytes);
  const bitmap = mtmd.audioFromFile(bytes);
  const seconds = bitmap.width / mtmd.audioSampleRate;
  if (seconds > MAX_AUDIO_SECONDS) {
    bitmap.dispose();
    throw new Error(`${seconds.toFixed(1)} seconds is longer than the ${MAX_AUDIO_SECONDS} allowed`);
  }
  return bitmap;
}

function toBitmap(mtmd: MtmdContext, image: EngineImage, index: number): MtmdBitmap {
  if (image.kind === "file") checkFileSize(mtmd, image.bytes, index);
  else if (image.kind === "rgb" && image.width * image.height > MAX_IMAGE_PIXELS) {
    throw new EngineError("invalid_request", `Cannot use image ${index + 1}: ${image.width}x${image.height} pixels is more than the ${MAX_IMAGE_PIXELS} allowed`);
  }
  const what = image.kind === "audio" ? "audio" : "image";
  try {
    if (image.kind === "audio") return audioBitmap(mtmd, image.bytes);
    if (!mtmd.supportsVision) throw new Error(`projector "${mtmd.path}" has no vision encoder`);
    if (image.kind === "file") return mtmd.imageFromFile(image.bytes);
    return mtmd.imageFromRgb(image.width, image.height, image.pixels, sha256Hex(image.pixels));
  } catch (error) {
    throw new EngineError("invalid_request", `Cannot use ${what} ${index + 1}: ${(error as Error).message}`);
  }
}

/**
 * Decodes the images and tokenizes the text around their media markers. Throws EngineError
 * invalid_request for an image that does not decode, a marker count that differs from the image
 * count, or a prompt that ends with an image (the first generated token needs a text token's logits).
 */
export function tokenizeWithImages(
  mtmd: MtmdContext, text: string, images: EngineImage[], options: { addSpecial: boolean; parseSpecial: boolean },
): ImagePrompt {
  const bitmaps: MtmdBitmap[] = [];
  try {
    images.forEach((image, i) => bitmaps.push(toBitmap(mtmd, image, i)));
    let chunks;
    try {
      chunks = mtmd.tokenize(text, bitmaps, options);
    } catch (error) {
      throw new EngineError("invalid_request", (error as Error).message);
    }
    const parts: Int32Array[] = [];
    const spans: ImageSpan[] = [];
    const mediaChunks = chunks.flatMap((chunk) => (chunk.type === "image" ? [chunk.chunk] : []));
    const cacheKeys = mediaCacheKeys(bitmaps.map((b) => b.id), mediaChunks.map((c) => c.id));
    let length = 0;
    for (const chunk of chunks) {
      if (chunk.type === "text") {
        parts.push(chunk.tokens);
        length += chunk.tokens.length;
        continue;
      }
      const cacheKey = cacheKeys[spans.length]!;
      const span = { start: length, positions: chunk.chunk.positionCount, tokens: chunk.chunk.tokenCount, marker: imageMarker(chunk.chunk.id), cacheKey, chunk: chunk.chunk };
      parts.push(new Int32Array(span.positions).fill(span.marker));
      spans.push(span);
      length += span.positions;
    }
    const last = spans.at(-1);
    if (last && last.start + last.positions === length) {
      disposeImages(spans);
      throw new EngineError("invalid_request", "Cannot generate from a prompt that ends with an image: add text after it");
    }
    const tokens = new Int32Array(length);
    let offset = 0;
    for (const part of parts) {
      tokens.set(part, offset);
      offset += part.length;
    }
    return { tokens, images: spans };
  } finally {
    for (const bitmap of bitmaps) bitmap.dispose();
  }
}

/** The prompt's length as a request's usage counts it: its text tokens and each image's embedding tokens. */
export function promptTokenCount(tokens: ArrayLike<number>, images: ImageSpan[]): number {
  return images.reduce((count, image) => count + image.tokens - image.positions, tokens.length);
}

export function disposeImages(images: ImageSpan[]): void {
  for (const image of images) image.chunk.dispose();
}

/** The image whose positions include `index` other than at its start, if any: prefix reuse must not cut one. */
export function imageCutAt(images: ImageSpan[], index: number): ImageSpan | undefined {
  return images.find((image) => image.start < index && index < image.start + image.positions);
}
