// WebP images, which libmtmd cannot read, decoded into RGB pixels by libwebp compiled to WebAssembly.
// The decoder's memory grows to the picture's size and WebAssembly never gives memory back, so the
// server decodes each image in a short-lived child process (`llamux __decode-webp`): whatever the
// decoder took is returned to the system when the child exits.
import { llamuxCommand } from "../binary/self.ts";
import type { EngineImage } from "../engine/types.ts";
import { ImageInputError } from "./image-input-error.ts";
import webpWasmPath from "@jsquash/webp/codec/dec/webp_dec.wasm" with { type: "file" };

type RgbImage = Extract<EngineImage, { kind: "rgb" }>;

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

/**
 * Decodes in this process (the child's job). The .wasm file is imported as a file so that
 * `bun build --compile` embeds it (the decoder would otherwise look for it next to its script).
 */
export async function decodeWebpHere(bytes: Uint8Array): Promise<RgbImage> {
  const decoder = await import("@jsquash/webp/decode.js");
  await decoder.init(await WebAssembly.compile(await Bun.file(webpWasmPath).arrayBuffer()));
  const image = await decoder.default(bytes.slice().buffer as ArrayBuffer);
  return { kind: "rgb", width: image.width, height: image.height, pixels: rgbFromRgba(image.data, image.width, image.height) };
}

/** `llamux __decode-webp`: WebP bytes on stdin; width and height (u32 little-endian) then RGB on stdout. */
export async function decodeWebpMain(): Promise<number> {
  const bytes = new Uint8Array(await Bun.stdin.arrayBuffer());
  let image: RgbImage;
  try {
    image = await decodeWebpHere(bytes);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
  const header = new Uint8Array(8);
  new DataView(header.buffer).setUint32(0, image.width, true);
  new DataView(header.buffer).setUint32(4, image.height, true);
  await Bun.write(Bun.stdout, Buffer.concat([header, image.pixels]));
  return 0;
}

/** Decodes in a child process; throws ImageInputError when the bytes do not decode. */
export async function decodeWebp(bytes: Uint8Array): Promise<RgbImage> {
  const child = Bun.spawn([...llamuxCommand(), "__decode-webp"], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: process.env });
  child.stdin.write(bytes);
  await child.stdin.end();
  const [output, stderr, code] = await Promise.all([new Response(child.stdout).arrayBuffer(), new Response(child.stderr).text(), child.exited]);
  const data = new Uint8Array(output);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = data.length >= 8 ? view.getUint32(0, true) : 0;
  const height = data.length >= 8 ? view.getUint32(4, true) : 0;
  if (code !== 0 || width === 0 || height === 0 || data.length !== 8 + width * height * 3) {
    const reason = stderr.trim().split("\n").filter(Boolean).at(-1) ?? `the decoder exited with code ${code}`;
    throw new ImageInputError(`Cannot decode WebP image: ${reason}`);
  }
  return { kind: "rgb", width, height, pixels: data.subarray(8) };
}
