// Sample-rate conversion for the Realtime API's audio (24 kHz pcm16 and 8 kHz G.711 in and out, 16 kHz
// for the voice-activity detector, the speech model's own rate): the Speex resampler from SpeexDSP,
// Echogarden's WebAssembly build. A stream keeps the filter's state between chunks, so chunks joined
// end to end give what the whole signal would; `end` flushes the filter's tail.
import speexFactory, { type SpeexNative } from "@echogarden/speex-resampler-wasm";
// The package's exports name only its JS: the .wasm is imported by path, so that compiled executables embed it.
import speexWasmPath from "../../../node_modules/@echogarden/speex-resampler-wasm/wasm/speex-resampler-nonsimd.wasm" with { type: "file" };
import { readFileSync } from "node:fs";

/** Speex's quality 0-10: 5 is its default for audio, at a fraction of 10's cost. */
const QUALITY = 5;

let native: Promise<SpeexNative> | undefined;
function speex(): Promise<SpeexNative> {
  native ??= speexFactory({ wasmBinary: new Uint8Array(readFileSync(speexWasmPath)) });
  return native;
}

export interface Resampler {
  /** The samples of `input` at the target rate (a little behind: the filter holds a few). */
  push(input: Float32Array): Float32Array;
  /** What the filter still holds; the stream is closed after it. */
  end(): Float32Array;
  /** Frees the filter (end does too); safe to call twice. */
  close(): void;
}

const passThrough: Resampler = { push: (input) => input, end: () => new Float32Array(0), close: () => {} };

/** A resampling stream from `fromRate` to `toRate` Hz (mono float PCM); the same rate passes samples through untouched. */
export async function createResampler(fromRate: number, toRate: number): Promise<Resampler> {
  if (fromRate === toRate) return passThrough;
  const lib = await speex();
  const status = lib._malloc(4);
  let state = lib._speex_resampler_init(1, fromRate, toRate, QUALITY, status);
  const failed = lib.HEAP32[status >> 2];
  lib._free(status);
  if (!state || failed) throw new Error(`The Speex resampler cannot convert ${fromRate} Hz to ${toRate} Hz`);
  // Output starts with the first input sample rather than the filter's delay.
  lib._speex_resampler_skip_zeros(state);
  const latency = lib._speex_resampler_get_input_latency(state);

  const run = (input: Float32Array): Float32Array => {
    if (input.length === 0) return input;
    const capacity = Math.ceil((input.length * toRate) / fromRate) + 64;
    const inPointer = lib._malloc(input.length * 4);
    const outPointer = lib._malloc(capacity * 4);
    const lengths = lib._malloc(8);
    try {
      lib.HEAPF32.set(input, inPointer >> 2);
      const out = new Float32Array(capacity * 2);
      let consumed = 0;
      let produced = 0;
      while (consumed < input.length) {
        lib.HEAPU32[lengths >> 2] = input.length - consumed;
        lib.HEAPU32[(lengths >> 2) + 1] = capacity;
        lib._speex_resampler_process_float(state, 0, inPointer + consumed * 4, lengths, outPointer, lengths + 4);
        const used = lib.HEAPU32[lengths >> 2]!;
        const written = lib.HEAPU32[(lengths >> 2) + 1]!;
        out.set(lib.HEAPF32.subarray(outPointer >> 2, (outPointer >> 2) + written), produced);
        consumed += used;
        produced += written;
        if (used === 0 && written === 0) break;
      }
      return out.slice(0, produced);
    } finally {
      lib._free(inPointer);
      lib._free(outPointer);
      lib._free(lengths);
    }
  };
  const close = () => {
    if (state) lib._speex_resampler_destroy(state);
    state = 0;
  };
  return {
    push: (input) => run(input),
    end() {
      const tail = run(new Float32Array(latency));
      close();
      return tail;
    },
    close,
  };
}
