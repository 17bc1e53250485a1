// Runs images through the vision encoder and decodes their embeddings into a sequence. Embeddings are
// kept by content hash and part (least recently used first out, within a byte budget), so an image sent
// again (the next turn of a chat re-sends its history, or one image twice in a prompt) is encoded once.
import type { LlamaContext } from "../../ffi/llama.ts";
import type { MtmdChunk, MtmdContext } from "../../ffi/mtmd.ts";
import type { ImageSpan } from "./image-prompt.ts";

/** Room for the embeddings of a few dozen typical images (a 256-token image of a 2048-wide model is 2 MiB). */
export const DEFAULT_IMAGE_CACHE_BYTES = 64 * 1024 * 1024;

export class ImageEncoder {
  private readonly cache = new Map<string, Float32Array>();
  private cachedBytes = 0;
  /** Images actually run through the encoder. */
  encodes = 0;

  constructor(readonly projector: MtmdContext, private readonly cacheBytes = DEFAULT_IMAGE_CACHE_BYTES) {}

  get mediaMarker(): string {
    return this.projector.mediaMarker;
  }

  /** The chunk's embeddings, from the cache when the chunk under `cacheKey` was encoded before ("": never cached). */
  embeddings(chunk: MtmdChunk, cacheKey: string): Float32Array {
    const cached = cacheKey ? this.cache.get(cacheKey) : undefined;
    if (cached) {
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, cached);
      return cached;
    }
    const embeddings = this.projector.encode(chunk);
    this.encodes++;
    if (cacheKey && embeddings.byteLength <= this.cacheBytes) {
      this.cache.set(cacheKey, embeddings);
      this.cachedBytes += embeddings.byteLength;
      for (const [id, old] of this.cache) {
        if (this.cachedBytes <= this.cacheBytes) break;
        this.cache.delete(id);
        this.cachedBytes -= old.byteLength;
      }
    }
    return embeddings;
  }

  /** Encodes (or recalls) the image and decodes it into `seq` from `position`; returns the position after it. */
  evaluate(context: LlamaContext, image: Pick<ImageSpan, "chunk" | "cacheKey">, position: number, seq: number): number {
    return this.projector.decodeImage(context, image.chunk, this.embeddings(image.chunk, image.cacheKey), position, seq, context.batchSize);
  }

  dispose(): void {
    this.cache.clear();
    this.projector.dispose();
  }
}
