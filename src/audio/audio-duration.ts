// The length of an audio file in seconds as its header states it, read without decoding: libmtmd's
// decoder (miniaudio) allocates room for that many samples before it decodes any, so a header that
// claims hours must be refused before the file reaches it (checkAudioLength). The engine asks
// miniaudio itself as well, just before decoding (src/engine/image-prompt.ts).
import { sniffAudioFormat } from "./audio-format.ts";
import { AudioInputError } from "./audio-input-error.ts";
import { MAX_AUDIO_SECONDS } from "./audio-limits.ts";
import { flacLength } from "./flac-header.ts";
import type { HeaderLength } from "./header-length.ts";
import { mp3Length } from "./mp3-frames.ts";
import { wavLength } from "./wav-header.ts";

/** What the header says; an MP3's frames are counted only until they pass `stopAfterSeconds`. */
export function audioHeaderLength(bytes: Uint8Array, stopAfterSeconds = MAX_AUDIO_SECONDS): HeaderLength {
  const format = sniffAudioFormat(bytes);
  if (format === "wav") return wavLength(bytes);
  if (format === "flac") return flacLength(bytes);
  if (format === "mp3") return mp3Length(bytes, stopAfterSeconds);
  return { problem: "the data is not a WAV, MP3 or FLAC file" };
}

/** Seconds of audio in the file by its header (MP3: up to a little past the limit); undefined when unreadable. */
export function audioSeconds(bytes: Uint8Array): number | undefined {
  const length = audioHeaderLength(bytes);
  return "seconds" in length ? length.seconds : undefined;
}

/** Refuses audio whose header is unreadable or states more than MAX_AUDIO_SECONDS. */
export function checkAudioLength(bytes: Uint8Array, what = "audio"): void {
  const length = audioHeaderLength(bytes);
  if ("problem" in length) throw new AudioInputError(`Cannot use ${what}: ${length.problem}`);
  if (length.seconds > MAX_AUDIO_SECONDS) {
    throw new AudioInputError(`Cannot use ${what}: its header says ${length.seconds.toPrecision(4)} seconds, longer than the ${MAX_AUDIO_SECONDS} allowed`);
  }
}
