// Where a request's audio comes from, in one place for every profile, the SDK and the CLI: base64 text
// (OpenAI input_audio parts), an uploaded file (transcriptions) or a file on disk (`llamux run`). Bytes
// are checked here (size, a WAV, MP3 or FLAC signature, the length its header states); libmtmd decodes
// them in the engine, which checks their length again before and after decoding.
import { readFile } from "node:fs/promises";
import { AudioInputError } from "./audio-input-error.ts";
import { MAX_AUDIO_BYTES } from "./audio-limits.ts";
import { checkAudioLength } from "./audio-duration.ts";
import { sniffAudioFormat, type AudioFormat } from "./audio-format.ts";

export { AudioInputError } from "./audio-input-error.ts";
export { sniffAudioFormat, type AudioFormat } from "./audio-format.ts";

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
  checkAudioLength(bytes, what);
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
