// Tells image formats apart by their first bytes and hands images to the engine: files libmtmd reads
// itself (stb_image: JPEG, PNG, GIF, BMP) as they are, WebP decoded here into RGB pixels, since libmtmd
// reads WebP only through ffmpeg.
import type { EngineImage } from "../engine/types.ts";
import { ImageInputError } from "./image-input-error.ts";
import webpWasmPath from "@jsquash/webp/codec/dec/webp_dec.wasm" with { type: "file" };

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

/** Packed RGB from RGBA, with transparent pixels over white, as viewers show them. */
function rgbFromRgba(rgba: Uint8ClampedArray | Uint8Array, width: number, height: number): Uint8Array {
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    const alpha = rgba[i + 3]! / 255;
    rgb[j] = Math.round(rgba[i]! * alpha + 255 * (1 - alpha));
    rgb[j + 1] = Math.round(rgba[i + 1]! * alpha + 255 * (1 - alpha));
    rgb[j + 2] = Math.round(rgba[i + 2]! * alpha + 255 * (1 - alpha));
  }
  return rgb;
}

let webpDecoder: Promise<(data: ArrayBuffer) => Promise<{ width: number; height: number; data: Uint8ClampedArray }>> | undefined;

/**
 * The WebAssembly WebP decoder, compiled on first use. Its .wasm file is imported as a file so that
 * `bun build --compile` embeds it (the decoder would otherwise look for it next to its script).
 */
function loadWebpDecoder() {
  webpDecoder ??= (async () => {
    const decoder = await import("@jsquash/webp/decode.js");
    await decoder.init(await WebAssembly.compile(await Bun.file(webpWasmPath).arrayBuffer()));
    return decoder.default;
  })();
  return webpDecoder;
}

async function decodeWebp(bytes: Uint8Array): Promise<EngineImage> {
  const decode = await loadWebpDecoder();
  let image: { width: number; height: number; data: Uint8ClampedArray };
  try {
    image = await decode(bytes.slice().buffer as ArrayBuffer);
  } catch (error) {
    throw new ImageInputError(`Cannot decode WebP image: ${(error as Error).message}`, { cause: error });
  }
  return { kind: "rgb", width: image.width, height: image.height, pixels: rgbFromRgba(image.data, image.width, image.height) };
}

/** The image as the engine takes it. Throws ImageInputError when the bytes are not a supported image. */
export async function toEngineImage(bytes: Uint8Array): Promise<EngineImage> {
  const format = sniffImageFormat(bytes);
  if (!format) throw new ImageInputError("Cannot use image: the data is not a JPEG, PNG, GIF, BMP or WebP image");
  if (format === "webp") return decodeWebp(bytes);
  return { kind: "file", bytes };
}
