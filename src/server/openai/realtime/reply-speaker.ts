// Speaks a reply piece by piece through the one speech path (runSpeech), in order, while the reply is
// still being written: each piece's PCM is resampled to the session's output rate (Speex), stretched for
// `speed` (Sonic), encoded in its format and handed on as it is decoded. The reply's frames are bounded
// across its pieces; stopping the signal stops the engine within one frame and sends nothing more.
import { createResampler, type Resampler } from "../../../audio/realtime/resampler.ts";
import { FORMAT_SAMPLE_RATES, encodeAudio, type RealtimeAudioFormat } from "../../../audio/realtime/audio-formats.ts";
import { pcm16FromFloat } from "../../../audio/speech/pcm16.ts";
import { timeStretch, type TimeStretch } from "../../../audio/speech/time-stretch.ts";
import type { ModelHandle } from "../../../generation/chat-spec.ts";
import { runSpeech } from "../../../generation/run-speech.ts";
import type { OptionValues } from "../../../options/values.ts";

export interface SpeakerSetup {
  model: ModelHandle;
  options: OptionValues;
  /** The reference voice's file, or the model's own voice. */
  speaker: Uint8Array | undefined;
  format: RealtimeAudioFormat;
  speed: number;
  maxFrames: number;
  signal: AbortSignal;
  /** Encoded audio and its length in milliseconds. */
  onAudio(bytes: Uint8Array, ms: number): void;
}

export class ReplySpeaker {
  private queue: Promise<void> = Promise.resolve();
  private framesLeft: number;
  private resampler: Resampler | undefined;
  private stretch: TimeStretch | undefined;
  private failure: unknown;
  /** Audio frames the speech model made for this reply. */
  frames = 0;

  constructor(private readonly setup: SpeakerSetup) {
    this.framesLeft = setup.maxFrames;
  }

  say(text: string): void {
    this.queue = this.queue.then(() => this.speak(text)).catch((error: unknown) => {
      this.failure ??= error;
    });
  }

  /** Waits for every piece; throws the first failure. */
  async finish(): Promise<void> {
    await this.queue;
    if (this.failure) throw this.failure;
    if (!this.setup.signal.aborted && this.resampler && this.stretch) this.emit(this.stretch.end(), true);
    this.resampler?.close();
    this.stretch?.close();
  }

  private emit(samples: Float32Array, last = false): void {
    let out = this.resampler!.push(samples);
    if (last) out = concat(out, this.resampler!.end());
    if (out.length === 0 || this.setup.signal.aborted) return;
    const rate = FORMAT_SAMPLE_RATES[this.setup.format];
    this.setup.onAudio(encodeAudio(this.setup.format, pcm16FromFloat(out)), (out.length * 1000) / rate);
  }

  private async speak(text: string): Promise<void> {
    if (this.framesLeft <= 0 || this.setup.signal.aborted) return;
    const running = await runSpeech(this.setup.model, {
      text, options: this.setup.options, maxFrames: this.framesLeft, ...(this.setup.speaker ? { speaker: this.setup.speaker } : {}),
    }, { signal: this.setup.signal });
    this.resampler ??= await createResampler(running.sampleRate, FORMAT_SAMPLE_RATES[this.setup.format]);
    this.stretch ??= await timeStretch(running.sampleRate, this.setup.speed);
    for await (const chunk of running.chunks) {
      if (this.setup.signal.aborted) break;
      this.emit(this.stretch.push(chunk));
    }
    const result = await running.done;
    this.frames += result.frames;
    this.framesLeft -= result.frames;
  }
}

function concat(a: Float32Array, b: Float32Array): Float32Array {
  if (b.length === 0) return a;
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
