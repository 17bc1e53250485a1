// FLAC through libFLAC (libflacjs, its asm.js build: one self-contained script, so a compiled executable
// needs no file beside it). A whole file is encoded at the end with its sample count known, so its
// STREAMINFO states the length; a stream states 0 ("unknown"), as the format allows, and its frames are
// handed on as libFLAC completes them.
import * as Flac from "libflacjs/dist/libflac.js";
import { pcm16FromFloat } from "./pcm16.ts";
import type { SpeechEncoder } from "./speech-encoder.ts";

const COMPRESSION_LEVEL = 5;
const BITS_PER_SAMPLE = 16;

async function flacReady(): Promise<void> {
  if (Flac.isReady()) return;
  await new Promise<void>((resolve) => Flac.on("ready", () => resolve()));
}

function joined(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  parts.length = 0;
  return out;
}

class FlacStream {
  private readonly encoder: number;
  private readonly written: Uint8Array[] = [];
  private finished = false;

  constructor(sampleRate: number, totalSamples: number) {
    this.encoder = Flac.create_libflac_encoder(sampleRate, 1, BITS_PER_SAMPLE, COMPRESSION_LEVEL, totalSamples, false, 0);
    if (!this.encoder) throw new Error(`libFLAC cannot encode ${sampleRate} Hz audio`);
    const status = Flac.init_encoder_stream(this.encoder, (data: Uint8Array) => { this.written.push(data.slice()); });
    if (status !== 0) throw new Error(`libFLAC could not start an encoder (status ${status})`);
  }

  write(samples: Float32Array): Uint8Array {
    if (samples.length > 0) {
      const ok = Flac.FLAC__stream_encoder_process_interleaved(this.encoder, Int32Array.from(pcm16FromFloat(samples)), samples.length);
      if (!ok) throw new Error("libFLAC could not encode the samples");
    }
    return joined(this.written);
  }

  end(): Uint8Array {
    this.close();
    return joined(this.written);
  }

  close(): void {
    if (this.finished) return;
    this.finished = true;
    Flac.FLAC__stream_encoder_finish(this.encoder);
    Flac.FLAC__stream_encoder_delete(this.encoder);
  }
}

export function flacEncoder(sampleRate: number, mode: "whole" | "stream"): SpeechEncoder {
  const ready = flacReady();
  if (mode === "stream") {
    let stream: FlacStream | undefined;
    const open = async () => { await ready; stream ??= new FlacStream(sampleRate, 0); return stream; };
    return {
      write: async (samples) => (await open()).write(samples),
      end: async () => (await open()).end(),
      cancel: async () => stream?.close(),
    };
  }
  // whole: keep the samples, encode once their count is known
  const kept: Float32Array[] = [];
  let count = 0;
  return {
    async write(samples) {
      kept.push(samples);
      count += samples.length;
      return new Uint8Array(0);
    },
    async end() {
      await ready;
      const stream = new FlacStream(sampleRate, count);
      const parts = kept.map((samples) => stream.write(samples));
      parts.push(stream.end());
      return joined(parts);
    },
    async cancel() {
      kept.length = 0;
    },
  };
}
