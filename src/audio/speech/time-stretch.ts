// OpenAI's `speed`: the speech made faster or slower without changing its pitch, by Sonic (the library
// made for speeding up speech; Echogarden's WebAssembly build). Chunks go in as the engine decodes them
// and come out stretched; the end flushes what Sonic still holds.
import sonicFactory, { type SonicNative } from "@echogarden/sonic-wasm";
import sonicWasmPath from "@echogarden/sonic-wasm/sonic.wasm" with { type: "file" };
import { readFileSync } from "node:fs";

/** OpenAI's range for `speed`. */
export const MIN_SPEECH_SPEED = 0.25;
export const MAX_SPEECH_SPEED = 4;

let native: Promise<SonicNative> | undefined;
function sonic(): Promise<SonicNative> {
  native ??= sonicFactory({ wasmBinary: new Uint8Array(readFileSync(sonicWasmPath)) });
  return native;
}

export interface TimeStretch {
  push(samples: Float32Array): Float32Array;
  end(): Float32Array;
  /** Frees Sonic's stream (end does too); safe to call twice. */
  close(): void;
}

/** A stretch at `speed` (1 = unchanged: samples pass through untouched). */
export async function timeStretch(sampleRate: number, speed: number): Promise<TimeStretch> {
  if (speed === 1) return { push: (samples) => samples, end: () => new Float32Array(0), close: () => {} };
  const lib = await sonic();
  let stream = lib._sonicCreateStream(sampleRate, 1);
  if (!stream) throw new Error("Sonic could not create a stream");
  lib._sonicSetSpeed(stream, speed);

  const drain = (): Float32Array => {
    const available = lib._sonicSamplesAvailable(stream);
    if (available <= 0) return new Float32Array(0);
    const pointer = lib._malloc(available * 4);
    try {
      const read = lib._sonicReadFloatFromStream(stream, pointer, available);
      return lib.HEAPF32.slice(pointer >> 2, (pointer >> 2) + read);
    } finally {
      lib._free(pointer);
    }
  };
  const close = () => {
    if (stream) lib._sonicDestroyStream(stream);
    stream = 0;
  };
  return {
    push(samples) {
      if (samples.length === 0) return samples;
      const pointer = lib._malloc(samples.length * 4);
      try {
        lib.HEAPF32.set(samples, pointer >> 2);
        if (!lib._sonicWriteFloatToStream(stream, pointer, samples.length)) throw new Error("Sonic could not take the samples");
      } finally {
        lib._free(pointer);
      }
      return drain();
    },
    end() {
      lib._sonicFlushStream(stream);
      const rest = drain();
      close();
      return rest;
    },
    close,
  };
}
