// An image file's width and height from its header, read before anything decodes it: a small file can
// declare a huge picture (a decompression bomb) whose pixels would exhaust memory. Each reader follows
// the decoder that will read the file (stb_image in libmtmd for JPEG, PNG, GIF and BMP; libwebp for
// WebP) closely enough to find the size that decoder finds; where it cannot, the size is undefined and
// the image is refused rather than decoded unchecked.
import type { ImageFormat } from "./image-format.ts";

export interface ImageSize {
  width: number;
  height: number;
}

/**
 * Most pixels an image may have: a 50-megapixel photo (8192 x 6104). Every vision encoder scales far
 * below this; decoded it takes 150 MB as RGB in the engine.
 */
export const MAX_IMAGE_PIXELS = 50_000_000;

/** stb_image's markers: the frames it decodes (baseline, extended, progressive) and the segments it skips. */
const isStbFrame = (marker: number) => marker === 0xc0 || marker === 0xc1 || marker === 0xc2;
const isStbSegment = (marker: number) => marker === 0xc4 || marker === 0xdb || marker === 0xdd || marker === 0xfe || (marker >= 0xe0 && marker <= 0xef);

/**
 * As stb_image's decode_jpeg_header reads it: after SOI, markers (any run of 0xFF fill bytes, then the
 * code); a byte that does not start a marker is skipped, as stb skips it; tables, restart intervals,
 * APPn and comments are passed by their length; the first SOF0-2 gives the size; any other marker
 * makes stb fail, so the image is refused.
 */
function jpegSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  let i = 2;
  while (i < b.length) {
    if (b[i] !== 0xff) {
      i++;
      continue;
    }
    while (i < b.length && b[i] === 0xff) i++;
    if (i + 2 >= b.length) return undefined;
    const marker = b[i]!;
    const at = i + 1; // the segment's length field
    if (isStbFrame(marker)) {
      if (at + 7 > b.length) return undefined;
      return { height: view.getUint16(at + 3), width: view.getUint16(at + 5) };
    }
    if (!isStbSegment(marker)) return undefined;
    i = at + view.getUint16(at);
  }
  return undefined;
}

/** stb_image reads the first chunk as IHDR, after an optional Apple CgBI chunk. */
function pngSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  let at = 8;
  for (let chunk = 0; chunk < 2 && at + 16 <= b.length; chunk++) {
    const type = String.fromCharCode(...b.subarray(at + 4, at + 8));
    if (type === "IHDR") return at + 16 <= b.length ? { width: view.getUint32(at + 8), height: view.getUint32(at + 12) } : undefined;
    if (type !== "CgBI") return undefined;
    at += 12 + view.getUint32(at);
  }
  return undefined;
}

/** The logical screen: stb_image allocates it whole and refuses frames outside it. */
function gifSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  return b.length >= 10 ? { width: view.getUint16(6, true), height: view.getUint16(8, true) } : undefined;
}

/**
 * BITMAPCOREHEADER (12 bytes) has 16-bit sizes; the later headers 32-bit ones, the width unsigned and
 * the height signed (negative: rows top-down), as stb_image reads them.
 */
function bmpSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  if (b.length < 26) return undefined;
  if (view.getUint32(14, true) === 12) return { width: view.getUint16(18, true), height: view.getUint16(20, true) };
  return { width: view.getUint32(18, true), height: Math.abs(view.getInt32(22, true)) };
}

/** A VP8L bitstream's size: signature 0x2f, then 14 bits of width - 1 and 14 of height - 1. */
function vp8lSize(b: Uint8Array, view: DataView, at: number): ImageSize | undefined {
  if (at + 5 > b.length || b[at] !== 0x2f) return undefined;
  const bits = view.getUint32(at + 1, true);
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

/** A VP8 key frame's size: 3 bytes of frame tag, the start code 9d 01 2a, then 14-bit width and height. */
function vp8Size(b: Uint8Array, view: DataView, at: number): ImageSize | undefined {
  if (at + 10 > b.length || (b[at]! & 1) !== 0 || b[at + 3] !== 0x9d || b[at + 4] !== 0x01 || b[at + 5] !== 0x2a) return undefined;
  return { width: view.getUint16(at + 6, true) & 0x3fff, height: view.getUint16(at + 8, true) & 0x3fff };
}

/**
 * As libwebp's header parse: a VP8X chunk gives the canvas, which the image must match (libwebp
 * refuses one that does not); otherwise a VP8 or VP8L chunk, or a bare bitstream after the RIFF header.
 */
function webpSize(b: Uint8Array, view: DataView): ImageSize | undefined {
  if (b.length < 20) return undefined;
  const chunk = String.fromCharCode(...b.subarray(12, 16));
  if (chunk === "VP8X") {
    if (b.length < 30) return undefined;
    const le24 = (at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    return { width: le24(24) + 1, height: le24(27) + 1 };
  }
  if (chunk === "VP8L") return vp8lSize(b, view, 20);
  if (chunk === "VP8 ") return vp8Size(b, view, 20);
  return vp8lSize(b, view, 12) ?? vp8Size(b, view, 12);
}

/** The size the decoder will find, or undefined when the header cannot be read (then the image is refused). */
export function imageSize(bytes: Uint8Array, format: ImageFormat): ImageSize | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (format) {
    case "png":
      return pngSize(bytes, view);
    case "gif":
      return gifSize(bytes, view);
    case "bmp":
      return bmpSize(bytes, view);
    case "jpeg":
      return jpegSize(bytes, view);
    case "webp":
      return webpSize(bytes, view);
  }
}
