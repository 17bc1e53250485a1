// Tells image formats apart by their first bytes and hands images to the engine: files libmtmd reads
// itself (stb_image: JPEG, PNG, GIF, BMP) as they are, WebP decoded into RGB pixels (in a child
// process), since libmtmd reads WebP only through ffmpeg. Every image's size is read from its header
// first and held to MAX_IMAGE_PIXELS; an image whose size cannot be read is refused.
import type { EngineImage } from "../engine/types.ts";
import { ImageInputError } from "./image-input-error.ts";
import { imageSize, MAX_IMAGE_PIXELS } from "./image-size.ts";
import { decodeWebp } from "./webp-decode.ts";

export type ImageFormat = "jpeg" | "png" | "gif" | "bmp" | "webp";

const ascii = (bytes: Uint8Array, start: number, end: number) => String.fromCharCode(...bytes.subarray(start, end));

/** The format the bytes start like, or undefined when they do not look like an image file. */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (bytes.length >= 8 && ascii(bytes, 1, 4) === "PNG" && bytes[0] === 0x89) return "png";
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a")) return "gif";
  if (bytes.length >= 14 && ascii(bytes, 0, 2) === "BM") return "bmp";
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP") return "webp";
  return undefined;
}

/** The image as the engine takes it. Throws ImageInputError when the bytes are not a supported image. */
export async function toEngineImage(bytes: Uint8Array): Promise<EngineImage> {
  const format = sniffImageFormat(bytes);
  if (!format) throw new ImageInputError("Cannot use image: the data is not a JPEG, PNG, GIF, BMP or WebP image");
  const size = imageSize(bytes, format);
  if (!size || size.width === 0 || size.height === 0) throw new ImageInputError(`Cannot use ${format.toUpperCase()} image: its header does not say its width and height`);
  if (size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new ImageInputError(`Cannot use image: ${size.width}x${size.height} pixels is more than the ${MAX_IMAGE_PIXELS} allowed`);
  }
  if (format !== "webp") return { kind: "file", bytes };
  const image = await decodeWebp(bytes);
  // The header read must have been the decoder's: anything else is refused, not passed on.
  if (image.width !== size.width || image.height !== size.height) {
    throw new ImageInputError(`Cannot use WebP image: it decodes to ${image.width}x${image.height}, not the ${size.width}x${size.height} its header says`);
  }
  return image;
}
