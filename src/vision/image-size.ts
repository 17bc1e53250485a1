// An image file's width and height from its header, read before anything decodes it: a small file can
// declare a huge picture (a decompression bomb) whose pixels would exhaust the engine's memory.
import type { ImageFormat } from "./image-format.ts";

export interface ImageSize {
  width: number;
  height: number;
}

/** Most pixels an image may have (about 8192 x 8192); far above what any vision encoder takes in. */
export const MAX_IMAGE_PIXELS = 64 * 1024 * 1024;

function jpegSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = view.getUint16(i + 2);
    // SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(i + 5), width: view.getUint16(i + 7) };
    }
    i += 2 + length;
  }
  return undefined;
}

function webpSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  const chunk = String.fromCharCode(...b.subarray(12, 16));
  if (chunk === "VP8X" && b.length >= 30) {
    const le24 = (at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    return { width: le24(24) + 1, height: le24(27) + 1 };
  }
  if (chunk === "VP8L" && b.length >= 25) {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 " && b.length >= 30) return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  return undefined;
}

/** The declared size, or undefined when the header is too short or unusual to read (the decoder then decides). */
export function imageSize(bytes: Uint8Array, format: ImageFormat): ImageSize | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (format) {
    case "png":
      return bytes.length >= 24 ? { width: view.getUint32(16), height: view.getUint32(20) } : undefined;
    case "gif":
      return bytes.length >= 10 ? { width: view.getUint16(6, true), height: view.getUint16(8, true) } : undefined;
    case "bmp":
      return bytes.length >= 26 ? { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) } : undefined;
    case "jpeg":
      return jpegSize(bytes, view);
    case "webp":
      return webpSize(bytes, view);
  }
}
