// Image bytes from what requests send: base64 text (Ollama's `images`) and data: URIs (OpenAI's
// image_url). Strict, so that a truncated or mangled upload is an error rather than a different image.
import { ImageInputError } from "./image-input-error.ts";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Standard (or URL-safe) base64, whitespace ignored; throws ImageInputError on anything else. */
export function decodeBase64Image(text: string, what = "image"): Uint8Array {
  const compact = text.replace(/\s+/g, "");
  if (compact.length === 0) throw new ImageInputError(`Cannot decode ${what}: it is empty`);
  const standard = BASE64.test(compact);
  if ((!standard && !BASE64_URL.test(compact)) || compact.length % 4 === 1) {
    throw new ImageInputError(`Cannot decode ${what}: it is not valid base64`);
  }
  return new Uint8Array(Buffer.from(compact, standard ? "base64" : "base64url"));
}

/** `data:image/png;base64,...` (a missing or generic media type is accepted, as Ollama accepts `data:;base64,`). */
export function decodeDataUri(uri: string): Uint8Array {
  const comma = uri.indexOf(",");
  const header = comma < 0 ? "" : uri.slice(5, comma).toLowerCase();
  if (comma < 0 || !header.split(";").includes("base64")) {
    throw new ImageInputError("Cannot decode image data URI: it must look like data:image/png;base64,<data>");
  }
  const mediaType = header.split(";")[0]!;
  if (mediaType && !mediaType.startsWith("image/") && mediaType !== "application/octet-stream") {
    throw new ImageInputError(`Cannot decode image data URI: media type "${mediaType}" is not an image`);
  }
  return decodeBase64Image(uri.slice(comma + 1), "image data URI");
}
