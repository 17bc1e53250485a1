// The input audio buffer of a session: decoded samples at the input format's rate, placed on the
// session's clock (milliseconds of all audio received), bounded in seconds. A commit takes all of it, or
// the span of one detected turn.
import { encodeAudio } from "../../../audio/realtime/audio-formats.ts";
import { wavHeader } from "../../../audio/speech/wav-file.ts";
import { ClientEventError } from "./client-events.ts";

/** Most seconds the buffer holds before a commit; an append past it is refused. */
export const MAX_BUFFER_SECONDS = 120;
/** OpenAI refuses a commit of less. */
export const MIN_COMMIT_MS = 100;

export class InputAudioBuffer {
  private chunks: Int16Array[] = [];
  private length = 0;
  /** Session time of the buffer's first sample. */
  private startMs = 0;
  /** All samples received in this session, at `rate`. */
  private received = 0;

  constructor(readonly rate: number) {}

  get durationMs(): number {
    return (this.length * 1000) / this.rate;
  }

  /** Session time at the end of the audio received so far. */
  get nowMs(): number {
    return (this.received * 1000) / this.rate;
  }

  append(samples: Int16Array): void {
    if (this.length + samples.length > MAX_BUFFER_SECONDS * this.rate) {
      throw new ClientEventError(`The input audio buffer holds at most ${MAX_BUFFER_SECONDS} seconds: commit or clear it first`, "audio", "input_audio_buffer_full");
    }
    this.chunks.push(samples);
    this.length += samples.length;
    this.received += samples.length;
  }

  /** The samples between two session times (clamped to what the buffer holds). */
  slice(fromMs: number, toMs: number): Int16Array {
    const all = this.all();
    const at = (ms: number) => Math.max(0, Math.min(all.length, Math.round(((ms - this.startMs) * this.rate) / 1000)));
    return all.slice(at(fromMs), at(toMs));
  }

  /** Drops what comes before session time `ms` (a commit took it, or it is older than any turn's padding). */
  dropBefore(ms: number): void {
    const all = this.all();
    const cut = Math.max(0, Math.min(all.length, Math.round(((ms - this.startMs) * this.rate) / 1000)));
    this.chunks = [all.subarray(cut)];
    this.length = all.length - cut;
    this.startMs = this.nowMs - this.durationMs;
  }

  clear(): void {
    this.dropBefore(this.nowMs);
  }

  /** Everything buffered, as one array (kept joined, so repeated calls cost nothing). */
  all(): Int16Array {
    if (this.chunks.length !== 1) {
      const joined = new Int16Array(this.length);
      let at = 0;
      for (const chunk of this.chunks) {
        joined.set(chunk, at);
        at += chunk.length;
      }
      this.chunks = [joined];
    }
    return this.chunks[0] ?? new Int16Array(0);
  }

  get bufferStartMs(): number {
    return this.startMs;
  }
}

/** The samples as a mono 16-bit WAV file, as the engine takes audio. */
export function wavOf(samples: Int16Array, rate: number): Uint8Array {
  const header = wavHeader(rate, samples.length);
  const bytes = new Uint8Array(header.length + samples.length * 2);
  bytes.set(header);
  bytes.set(encodeAudio("pcm16", samples), header.length);
  return bytes;
}
