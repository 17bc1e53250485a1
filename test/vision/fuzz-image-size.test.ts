// Property-based check (fast-check) that the server's header reader agrees with the decoder: for
// mutated JPEG, PNG, GIF and BMP files, whenever stb_image (inside libmtmd, which decodes them) reads a
// size within the pixel cap, the server reads the same size or refuses the image, and when stb_image
// reads one over the cap, so does the server (or it refuses). A reader that saw a smaller size than the
// decoder would let a decompression bomb past the cap.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { ptr } from "bun:ffi";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { libraryDir } from "../../ffi/library-dir.ts";
import { openMtmd } from "../../ffi/symbols.ts";
import { sniffImageFormat } from "../../src/vision/image-format.ts";
import { imageSize, MAX_IMAGE_PIXELS } from "../../src/vision/image-size.ts";

const { mtmd } = openMtmd(libraryDir());
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, "..", "fixtures", "images", name)));

function stbSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const out = new Int32Array(3);
  // As MtmdContext.imageFileSize reads it: unsigned width, a BMP's signed height as its loader takes it (abs).
  return mtmd.stbi_info_from_memory(ptr(bytes), bytes.length, ptr(out, 0), ptr(out, 4), ptr(out, 8)) ? { width: out[0]! >>> 0, height: Math.abs(out[1]!) } : undefined;
}

function bmpOf(width: number, height: number, core: boolean): Uint8Array {
  const bytes = new Uint8Array(core ? 26 + 64 : 54 + 64);
  const view = new DataView(bytes.buffer);
  bytes.set([0x42, 0x4d]);
  view.setUint32(2, bytes.length, true);
  view.setUint32(10, core ? 26 : 54, true);
  view.setUint32(14, core ? 12 : 40, true);
  if (core) {
    view.setUint16(18, width, true);
    view.setUint16(20, height, true);
    view.setUint16(22, 1, true);
    view.setUint16(24, 24, true);
  } else {
    view.setInt32(18, width, true);
    view.setInt32(22, height, true);
    view.setUint16(26, 1, true);
    view.setUint16(28, 24, true);
  }
  return bytes;
}

const seeds = [fixture("python-16.jpg"), fixture("llama1-icon.png"), bmpOf(40, 30, false), bmpOf(40, 30, true),
  new Uint8Array([...new TextEncoder().encode("GIF89a"), 10, 0, 10, 0, 0x80, 0, 0, ...new Uint8Array(6), 0x2c, 0, 0, 0, 0, 10, 0, 10, 0, 0, 2, 2, 0x4c, 0x01, 0, 0x3b])];

const mutated = fc.tuple(
  fc.constantFrom(...seeds),
  fc.array(fc.record({ at: fc.nat({ max: 300 }), byte: fc.integer({ min: 0, max: 255 }) }), { maxLength: 6 }),
  fc.array(fc.record({ at: fc.nat({ max: 300 }), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }), { maxLength: 2 }),
).map(([seed, edits, inserts]) => {
  let bytes = Array.from(seed);
  for (const { at, bytes: extra } of inserts) bytes.splice(Math.min(at, bytes.length), 0, ...extra);
  for (const { at, byte } of edits) if (at < bytes.length && at > 2) bytes[at] = byte;
  return new Uint8Array(bytes);
});

test("whenever stb_image reads a size, the server's reader reads the same or refuses; over the cap, it refuses", () => {
  let agreed = 0;
  fc.assert(fc.property(mutated, (bytes) => {
    const format = sniffImageFormat(bytes);
    if (!format || format === "webp") return;
    const decoder = stbSize(bytes);
    if (!decoder) return;
    const ours = imageSize(bytes, format);
    if (ours === undefined) return;
    if (decoder.width * decoder.height > MAX_IMAGE_PIXELS) {
      expect(ours.width * ours.height).toBeGreaterThan(MAX_IMAGE_PIXELS);
      return;
    }
    expect(ours).toEqual(decoder);
    agreed++;
  }), { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) });
  // Not vacuous: most mutations still make images both readers read.
  expect(agreed).toBeGreaterThan(100);
});
