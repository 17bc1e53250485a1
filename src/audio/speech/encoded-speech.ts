// A speech's PCM chunks, stretched to the asked speed and encoded in the asked format, as byte chunks:
// what every writer (a whole HTTP body, a chunked one, SSE deltas, a file) sends on.
import { speechEncoder, type SpeechFormat } from "./speech-encoder.ts";
import { timeStretch } from "./time-stretch.ts";

export interface SpeechOutput {
  format: SpeechFormat;
  sampleRate: number;
  /** 1 leaves the samples as they are. */
  speed: number;
  /** "whole": one complete file at the end; "stream": bytes as soon as they are encoded. */
  mode: "whole" | "stream";
}

export async function* encodedSpeech(chunks: AsyncIterable<Float32Array>, output: SpeechOutput): AsyncGenerator<Uint8Array> {
  const stretch = await timeStretch(output.sampleRate, output.speed);
  const encoder = speechEncoder(output.format, output.sampleRate, output.mode);
  let ended = false;
  try {
    for await (const chunk of chunks) {
      const bytes = await encoder.write(stretch.push(chunk));
      if (bytes.length > 0) yield bytes;
    }
    const rest = await encoder.write(stretch.end());
    const last = await encoder.end();
    ended = true;
    if (rest.length > 0) yield rest;
    if (last.length > 0) yield last;
  } finally {
    stretch.close();
    if (!ended) await encoder.cancel();
  }
}
