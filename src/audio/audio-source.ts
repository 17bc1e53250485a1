// Where a request's audio comes from, in one place for every profile, the SDK and the CLI: base64 text
// (OpenAI input_audio parts), an uploaded file (transcriptions) or a file on disk (`llamux run`). Bytes
// are checked here (size, a WAV, MP3 or FLAC signature); libmtmd decodes them in the engine, which
// checks their length in seconds.
import { readFile } from "node:fs/promises";
import { AudioInputError } from "./audio-input-error.ts";
import { MAX_AUDIO_BYTES } from "./audio-limits.ts";

export { AudioInputError } from "./audio-input-error.ts";

export type AudioFormat = "wav" | "mp3" | "flac";

/** Formats by their file signature, as libmtmd's miniaudio decoder recognises them. */
export function sniffAudioFormat(bytes: Uint8Array): AudioFormat | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE") return "wav";
  if (bytes.length >= 4 && ascii(0, 4) === "fLaC") return "flac";
  if (bytes.length >= 3 && (ascii(0, 3) === "ID3" || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0))) return "mp3";
  return undefined;
}

/** The format names OpenAI's input_audio.format takes that llamux decodes. */
const FORMAT_NAMES: Record<string, AudioFormat> = { wav: "wav", wave: "wav", mp3: "mp3", mpeg: "mp3", flac: "flac" };

/** Refuses bytes that are not a WAV, MP3 or FLAC file (or over the size limit) before they travel further. */
export function checkedAudio(bytes: Uint8Array, what = "audio", declared?: string): Uint8Array {
  if (declared !== undefined && !FORMAT_NAMES[declared.toLowerCase()]) {
    throw new AudioInputError(`Cannot use ${what}: format "${declared}" is not supported (use wav, mp3 or flac)`);
  }
  if (bytes.length === 0) throw new AudioInputError(`Cannot use ${what}: it is empty`);
  if (bytes.length > MAX_AUDIO_BYTES) throw new AudioInputError(`Cannot use ${what}: ${bytes.length} bytes is more than the ${MAX_AUDIO_BYTES} allowed`);
  const format = sniffAudioFormat(bytes);
  if (!format) throw new AudioInputError(`Cannot use ${what}: the data is not a WAV, MP3 or FLAC file`);
  return bytes;
}

/** OpenAI's input_audio `{data, format}`: base64 of an audio file. */
export function audioFromBase64(data: string, format?: string): Uint8Array {
  const text = data.replace(/^data:audio\/[\w.+-]+;base64,/i, "").replace(/\s+/g, "");
  if (text.length > Math.ceil(MAX_AUDIO_BYTES / 3) * 4 + 4) throw new AudioInputError(`Cannot use audio: more than the ${MAX_AUDIO_BYTES} bytes allowed`);
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw new AudioInputError("Cannot use audio: the data is not valid base64");
  return checkedAudio(new Uint8Array(Buffer.from(text, "base64")), "audio", format);
}

/** An audio file on disk (`llamux run`'s typed path). */
export async function audioFromFile(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (error) {
    throw new AudioInputError(`Cannot read audio "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  return checkedAudio(bytes, `audio "${path}"`);
}
