// Every speech format, whole and streamed, decodes back (ffmpeg) to the samples given: exactly for the
// lossless ones (pcm, wav, flac), and for the lossy ones the same tone and count (opus: exact, through the
// pre-skip and the end trim; mp3: plus at most LAME's delay and last-granule padding).
import { describe, expect, test } from "bun:test";
import { pcm16FromFloat } from "../../src/audio/speech/pcm16.ts";
import { SPEECH_FORMATS, speechEncoder, type SpeechFormat } from "../../src/audio/speech/speech-encoder.ts";
import { decodeSpeech } from "./speech-decode.ts";

const RATE = 24000;
/** An odd length (not a whole number of any codec's frames) of a 440 Hz tone with a slow fade. */
const SAMPLES = 24000 + 1234;
const tone = new Float32Array(SAMPLES);
for (let i = 0; i < SAMPLES; i++) tone[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / RATE) * (1 - i / SAMPLES / 2);

/**
 * MP3 (LAME, MPEG-2 layer III at 24 kHz, 576-sample granules): the file states no encoder delay, so a
 * decoder keeps LAME's delay (576 + 529 samples) and the padding of the last granule (under 576).
 */
const MP3_PADDING = 576 + 529 + 576;

async function encode(format: SpeechFormat, mode: "whole" | "stream", chunk = 3000): Promise<Uint8Array> {
  const encoder = speechEncoder(format, RATE, mode);
  const parts: Uint8Array[] = [];
  for (let at = 0; at < SAMPLES; at += chunk) parts.push(await encoder.write(tone.subarray(at, Math.min(SAMPLES, at + chunk))));
  parts.push(await encoder.end());
  return Buffer.concat(parts);
}

/** Correlation of the decoded samples with the tone, over the overlap starting at `offset`. */
function correlation(decoded: Int16Array, offset = 0): number {
  let dot = 0, a = 0, b = 0;
  for (let i = 0; i + offset < decoded.length && i < SAMPLES; i++) {
    const x = decoded[i + offset]! / 32768, y = tone[i]!;
    dot += x * y; a += x * x; b += y * y;
  }
  return dot / Math.sqrt(a * b);
}

describe("speech encoders decode back", () => {
  const exact = pcm16FromFloat(tone);
  for (const format of ["pcm", "wav", "flac"] as const) {
    for (const mode of ["whole", "stream"] as const) {
      test(`${format} (${mode}) is lossless`, async () => {
        const decoded = decodeSpeech(await encode(format, mode), format, RATE);
        expect(decoded.length).toBe(SAMPLES);
        expect(Buffer.from(decoded.buffer).equals(Buffer.from(exact.buffer))).toBe(true);
      });
    }
  }

  for (const mode of ["whole", "stream"] as const) {
    test(`opus (${mode}) decodes to the same number of samples and the same tone`, async () => {
      const decoded = decodeSpeech(await encode("opus", mode), "opus", RATE);
      expect(decoded.length).toBe(SAMPLES);
      expect(correlation(decoded)).toBeGreaterThan(0.9);
    });
  }

  for (const mode of ["whole", "stream"] as const) {
    test(`mp3 (${mode}) decodes to the samples plus at most the codec's delay and padding, with the same tone`, async () => {
      const decoded = decodeSpeech(await encode("mp3", mode), "mp3", RATE);
      expect(decoded.length).toBeGreaterThanOrEqual(SAMPLES);
      expect(decoded.length - SAMPLES).toBeLessThanOrEqual(MP3_PADDING);
      let best = 0;
      for (let offset = 0; offset <= MP3_PADDING; offset += 1) best = Math.max(best, correlation(decoded, offset));
      expect(best).toBeGreaterThan(0.9);
    });
  }

  test("a stream hands bytes on before the end", async () => {
    for (const format of SPEECH_FORMATS) {
      const encoder = speechEncoder(format, RATE, "stream");
      let early = 0;
      for (let at = 0; at < SAMPLES; at += 4800) early += (await encoder.write(tone.subarray(at, Math.min(SAMPLES, at + 4800)))).length;
      await encoder.end();
      expect({ format, early: early > 0 }).toEqual({ format, early: true });
    }
  });
});
