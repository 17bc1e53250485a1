// What one speech request asks of the orchestrator, whatever surface it came through (the speech route of
// each profile, the SDKs, `llamux run --output`, the web UI): the text, an optional language and reference
// voice, the sampling parameters through the option table, and the longest speech wanted.
import { OptionError } from "../options/check-value.ts";
import type { OptionValues } from "../options/values.ts";

export interface SpeechSpec {
  text: string;
  /** A language name the model's pipeline knows; unset: its default. */
  language?: string;
  /** A reference voice: the bytes of a WAV, MP3 or FLAC file (checked and bounded like audio input). */
  speaker?: Uint8Array;
  /** The parameters, layered already: seed, top_k, top_p and temperature are used. */
  options: OptionValues;
  /** Most audio frames; default and ceiling MAX_SPEECH_FRAMES. */
  maxFrames?: number;
}

/**
 * Most audio frames one speech may take. Both pipelines make 12.5 frames a second of audio, so this is
 * about five and a half minutes; each frame is one backbone step and one run of the audio decoder.
 */
export const MAX_SPEECH_FRAMES = 4096;
/** Most characters of text one speech may take (OpenAI's /v1/audio/speech input limit). */
export const MAX_SPEECH_TEXT_CHARS = 4096;

/** Refuses an empty text or one over MAX_SPEECH_TEXT_CHARS (field `input`, as /v1/audio/speech names it). */
export function checkSpeechText(text: string): void {
  if (text.length === 0) throw new OptionError("input", "a non-empty text", "input must not be empty: give the text to speak");
  if (text.length > MAX_SPEECH_TEXT_CHARS) {
    throw new OptionError("input", `at most ${MAX_SPEECH_TEXT_CHARS} characters`, `input is ${text.length} characters: at most ${MAX_SPEECH_TEXT_CHARS} are allowed`);
  }
}

/** The model loaded has no speech output (no audio-generation projector). */
export class NoSpeechOutputError extends Error {
  constructor(readonly model: string) {
    super(`Model "${model}" does not produce speech: it needs a text-to-speech backbone with its audio-generation projector (mmproj)`);
    this.name = "NoSpeechOutputError";
  }
}
