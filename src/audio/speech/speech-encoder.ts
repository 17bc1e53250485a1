// The audio formats of a speech response (OpenAI's response_format) and one encoder per request: float
// PCM chunks in, the format's bytes out. "whole" makes a complete file (lengths in its headers); "stream"
// makes bytes that can be sent as they come (lengths stated as unknown, no header rewritten at the end).
import { containerEncoder } from "./container-encoder.ts";
import { flacEncoder } from "./flac-encoder.ts";
import { OPUS_SAMPLE_RATES } from "./opus-encoder.ts";
import { pcm16Bytes } from "./pcm16.ts";
import { wavHeader } from "./wav-file.ts";

/** The formats llamux encodes, OpenAI's default (mp3) first. OpenAI's `aac` has no encoder here. */
export const SPEECH_FORMATS = ["mp3", "opus", "flac", "wav", "pcm"] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const SPEECH_MIME_TYPES: Record<SpeechFormat, string> = {
  mp3: "audio/mpeg",
  opus: "audio/ogg; codecs=opus",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

export function isSpeechFormat(name: string): name is SpeechFormat {
  return (SPEECH_FORMATS as readonly string[]).includes(name);
}

export interface SpeechEncoder {
  /** Encodes a chunk; returns the bytes ready now (often none for a whole file). */
  write(samples: Float32Array): Promise<Uint8Array>;
  /** Encodes what is left; returns the last bytes (for a whole file: all of it). */
  end(): Promise<Uint8Array>;
  /** Drops the encoder's state when the speech stops early. */
  cancel(): Promise<void>;
}

/** Raw 16-bit PCM, and WAV: its header and the same samples. */
function pcmEncoder(sampleRate: number, wav: boolean, mode: "whole" | "stream"): SpeechEncoder {
  if (mode === "stream") {
    let headerSent = !wav;
    return {
      async write(samples) {
        const body = pcm16Bytes(samples);
        if (headerSent) return body;
        headerSent = true;
        return Buffer.concat([wavHeader(sampleRate, undefined), body]);
      },
      async end() {
        return headerSent ? new Uint8Array(0) : wavHeader(sampleRate, undefined);
      },
      async cancel() {},
    };
  }
  const bodies: Uint8Array[] = [];
  let samplesSeen = 0;
  return {
    async write(samples) {
      bodies.push(pcm16Bytes(samples));
      samplesSeen += samples.length;
      return new Uint8Array(0);
    },
    async end() {
      return Buffer.concat(wav ? [wavHeader(sampleRate, samplesSeen), ...bodies] : bodies);
    },
    async cancel() {
      bodies.length = 0;
    },
  };
}

/** Formats the sample rate allows (libopus takes 8, 12, 16, 24 and 48 kHz only). */
export function formatsAtRate(sampleRate: number): SpeechFormat[] {
  return SPEECH_FORMATS.filter((format) => format !== "opus" || OPUS_SAMPLE_RATES.includes(sampleRate));
}

export function speechEncoder(format: SpeechFormat, sampleRate: number, mode: "whole" | "stream"): SpeechEncoder {
  switch (format) {
    case "pcm":
      return pcmEncoder(sampleRate, false, mode);
    case "wav":
      return pcmEncoder(sampleRate, true, mode);
    case "flac":
      return flacEncoder(sampleRate, mode);
    case "mp3":
    case "opus":
      return containerEncoder(format, sampleRate, mode);
  }
}
