// MP3 and Ogg Opus through Mediabunny: float PCM goes in as AudioSamples, the muxer's writes come out as
// bytes. A file ("whole") may be written out of order (the MP3 muxer fills its Xing header in at the end),
// so its writes land at their positions; a stream is written append-only (no Xing header), and its bytes
// are handed on as soon as the muxer writes them.
import { AudioSample, AudioSampleSource, Mp3OutputFormat, OggOutputFormat, Output, StreamTarget, type OutputFormat, type StreamTargetChunk } from "mediabunny";
import { registerMp3Encoder } from "@mediabunny/mp3-encoder";
import { registerOpusEncoder } from "./opus-encoder.ts";
import type { SpeechEncoder } from "./speech-encoder.ts";

export type ContainerFormat = "mp3" | "opus";

const MP3_BITRATE = 64_000;
const OPUS_BITRATE = 48_000;

let registered = false;
function registerEncoders(): void {
  if (registered) return;
  registered = true;
  registerMp3Encoder();
  registerOpusEncoder();
}

/** Bytes written at positions; `take` hands on what follows what was handed on before. */
class WrittenBytes {
  private parts: Uint8Array[] = [];
  private length = 0;
  private handedOn = 0;
  constructor(private readonly appendOnly: boolean) {}

  write({ data, position }: StreamTargetChunk): void {
    if (position === this.length) {
      this.parts.push(data.slice());
      this.length += data.length;
      return;
    }
    if (this.appendOnly || position > this.length || position < this.handedOn) throw new Error(`the muxer wrote at byte ${position} of ${this.length}: not an append-only stream`);
    // an earlier part is rewritten (a header filled in at the end): patch the bytes in place
    const whole = this.all();
    whole.set(data.subarray(0, Math.max(0, Math.min(data.length, this.length - position))), position);
    if (position + data.length > this.length) {
      this.parts = [whole, data.slice(this.length - position)];
      this.length = position + data.length;
    } else {
      this.parts = [whole];
    }
  }

  /** The bytes not handed on yet. */
  take(): Uint8Array {
    const whole = this.all();
    const out = whole.slice(this.handedOn);
    this.handedOn = this.length;
    return out;
  }

  private all(): Uint8Array {
    if (this.parts.length !== 1) {
      const joined = new Uint8Array(this.length);
      let at = 0;
      for (const part of this.parts) { joined.set(part, at); at += part.length; }
      this.parts = [joined];
    }
    return this.parts[0] ?? new Uint8Array(0);
  }
}

export function containerEncoder(format: ContainerFormat, sampleRate: number, mode: "whole" | "stream"): SpeechEncoder {
  registerEncoders();
  const written = new WrittenBytes(mode === "stream");
  const target = new StreamTarget(new WritableStream<StreamTargetChunk>({ write: (chunk) => written.write(chunk) }));
  const outputFormat: OutputFormat = format === "mp3"
    ? new Mp3OutputFormat({ xingHeader: mode === "whole" })
    : new OggOutputFormat(mode === "stream" ? { maximumPageDuration: 0.2 } : {});
  const output = new Output({ format: outputFormat, target });
  const source = new AudioSampleSource({ codec: format, bitrate: format === "mp3" ? MP3_BITRATE : OPUS_BITRATE });
  output.addAudioTrack(source);
  const started = output.start();
  let samplesGiven = 0;
  return {
    async write(samples) {
      await started;
      if (samples.length === 0) return new Uint8Array(0);
      const sample = new AudioSample({ data: samples, format: "f32", numberOfChannels: 1, sampleRate, timestamp: samplesGiven / sampleRate });
      samplesGiven += samples.length;
      try {
        await source.add(sample);
      } finally {
        sample.close();
      }
      return mode === "stream" ? written.take() : new Uint8Array(0);
    },
    async end() {
      await started;
      source.close();
      await output.finalize();
      return written.take();
    },
    async cancel() {
      await output.cancel().catch(() => undefined);
    },
  };
}
