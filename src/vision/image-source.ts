// Where a request's images come from, in one place for every profile, the SDK and the CLI: an image
// URL (data: URI or http(s), fetched under the server's policy), base64 text, or a file on disk.
import { readFile } from "node:fs/promises";
import { decodeBase64Image, decodeDataUri } from "./image-data.ts";
import { defaultImageFetchPolicy, fetchImageUrl, type ImageFetchPolicy } from "./image-fetch.ts";
import { ImageInputError } from "./image-input-error.ts";
import { sniffImageFormat } from "./image-format.ts";

export { ImageInputError } from "./image-input-error.ts";
export { defaultImageFetchPolicy, type ImageFetchPolicy } from "./image-fetch.ts";

/** Refuses bytes that are not an image file before they travel any further. */
function checked(bytes: Uint8Array, what: string): Uint8Array {
  if (!sniffImageFormat(bytes)) throw new ImageInputError(`Cannot use ${what}: it is not a JPEG, PNG, GIF, BMP or WebP image`);
  return bytes;
}

/** An OpenAI image_url: a `data:image/...;base64,` URI or an http(s) URL. */
export async function imageFromUrl(url: string, policy: ImageFetchPolicy = defaultImageFetchPolicy): Promise<Uint8Array> {
  const trimmed = url.trim();
  if (/^data:/i.test(trimmed)) return checked(decodeDataUri(trimmed), "image data URI");
  if (/^https?:\/\//i.test(trimmed)) return checked(await fetchImageUrl(trimmed, policy), `image at "${new URL(trimmed).origin}"`);
  throw new ImageInputError("Cannot use image URL: it must be a data:image/...;base64 URI or an http(s) URL");
}

/** Ollama's `images` entries: base64 of an image file. */
export function imageFromBase64(text: string): Uint8Array {
  return checked(decodeBase64Image(text), "image");
}

/** An image file on disk (`llamux run`'s /image). */
export async function imageFromFile(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (error) {
    throw new ImageInputError(`Cannot read image "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  return checked(bytes, `image "${path}"`);
}
