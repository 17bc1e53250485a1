// OpenAI's server_vad over frame decisions from the voice-activity detector: speech starts once speech
// frames make up `threshold` of the last 200 ms, and stops after `silence_duration_ms` without a speech
// frame. Times are milliseconds of all audio the session has received; the turn's audio starts
// `prefix_padding_ms` before the first speech frame and ends when the silence has lasted (as OpenAI
// reports audio_start_ms and audio_end_ms).
import { VAD_FRAME_MS } from "./voice-activity.ts";

export interface TurnSettings {
  /** 0-1: the share of the last 200 ms that must be speech for a turn to start. */
  threshold: number;
  prefixPaddingMs: number;
  silenceDurationMs: number;
}

export type TurnEvent = { type: "speech_started"; audioStartMs: number } | { type: "speech_stopped"; audioEndMs: number };

const WINDOW_FRAMES = 200 / VAD_FRAME_MS;

export class TurnDetector {
  private readonly window: boolean[] = [];
  private frames = 0;
  private speaking = false;
  private lastSpeechEndMs = 0;

  constructor(private readonly settings: TurnSettings) {}

  get inSpeech(): boolean {
    return this.speaking;
  }

  /** The turn events the next frames' decisions give, in order. */
  push(decisions: boolean[]): TurnEvent[] {
    const events: TurnEvent[] = [];
    for (const speech of decisions) {
      this.window.push(speech);
      if (this.window.length > WINDOW_FRAMES) this.window.shift();
      this.frames++;
      const nowMs = this.frames * VAD_FRAME_MS;
      if (speech) this.lastSpeechEndMs = nowMs;
      if (!this.speaking) {
        const share = this.window.filter(Boolean).length / WINDOW_FRAMES;
        if (speech && share >= Math.max(this.settings.threshold, 1 / WINDOW_FRAMES)) {
          this.speaking = true;
          const firstSpeech = this.window.indexOf(true);
          const firstSpeechMs = nowMs - (this.window.length - firstSpeech) * VAD_FRAME_MS;
          events.push({ type: "speech_started", audioStartMs: Math.max(0, firstSpeechMs - this.settings.prefixPaddingMs) });
        }
      } else if (nowMs - this.lastSpeechEndMs >= this.settings.silenceDurationMs) {
        this.speaking = false;
        this.window.length = 0;
        events.push({ type: "speech_stopped", audioEndMs: nowMs });
      }
    }
    return events;
  }
}
