// The Realtime API's three audio formats, as samples: pcm16 (16-bit little-endian at 24 kHz), and G.711
// μ-law and A-law (8 kHz, one byte a sample, the telephone codecs; the alawmulaw package's codecs).
import { alaw, mulaw } from "alawmulaw";

export const REALTIME_AUDIO_FORMATS = ["pcm16", "g711_ulaw", "g711_alaw"] as const;
export type RealtimeAudioFormat = (typeof REALTIME_AUDIO_FORMATS)[number];

export const FORMAT_SAMPLE_RATES: Record<RealtimeAudioFormat, number> = { pcm16: 24000, g711_ulaw: 8000, g711_alaw: 8000 };

/** The samples of one audio chunk; a pcm16 chunk of an odd number of bytes is refused (RangeError). */
export function decodeAudio(format: RealtimeAudioFormat, bytes: Uint8Array): Int16Array {
  if (format === "g711_ulaw") return mulaw.decode(bytes);
  if (format === "g711_alaw") return alaw.decode(bytes);
  if (bytes.length % 2 !== 0) throw new RangeError(`pcm16 audio is 2 bytes a sample, but the chunk has ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = new Int16Array(bytes.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

export function encodeAudio(format: RealtimeAudioFormat, samples: Int16Array): Uint8Array {
  if (format === "g711_ulaw") return mulaw.encode(samples);
  if (format === "g711_alaw") return alaw.encode(samples);
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true);
  return bytes;
}

/** Float samples in [-1, 1] as 16-bit ones (clamped, rounded as pcm16 speech is). */
export { pcm16FromFloat } from "../speech/pcm16.ts";
