// Which stretches of input audio are speech: WebRTC's voice-activity detector (libfvad, Echogarden's
// WebAssembly build), judged on 20 ms frames. Audio at a rate the detector does not take (24 kHz pcm16)
// is resampled to 16 kHz first. The caller turns frame decisions into turns (turn-detector.ts).
import fvadFactory, { type FvadNative } from "@echogarden/fvad-wasm";
import fvadWasmPath from "@echogarden/fvad-wasm/fvad.wasm" with { type: "file" };
import { readFileSync } from "node:fs";
import { createResampler, type Resampler } from "./resampler.ts";

export const VAD_FRAME_MS = 20;
/** libfvad's aggressiveness, 0-3: 3 calls the fewest non-speech frames speech (room noise, a fan). */
const AGGRESSIVENESS = 3;
const DETECTOR_RATES = [8000, 16000, 32000, 48000];

let native: Promise<FvadNative> | undefined;
function fvad(): Promise<FvadNative> {
  native ??= fvadFactory({ wasmBinary: new Uint8Array(readFileSync(fvadWasmPath)) });
  return native;
}

export interface VoiceActivity {
  /** One decision per whole 20 ms frame the samples complete (true: speech), in order. */
  push(samples: Int16Array): boolean[];
  close(): void;
}

/** A detector for mono 16-bit audio at `sampleRate`. */
export async function createVoiceActivity(sampleRate: number): Promise<VoiceActivity> {
  const lib = await fvad();
  const rate = DETECTOR_RATES.includes(sampleRate) ? sampleRate : 16000;
  const resampler: Resampler | undefined = rate === sampleRate ? undefined : await createResampler(sampleRate, rate);
  let instance = lib._fvad_new();
  if (!instance) throw new Error("WebRTC's voice-activity detector could not start");
  lib._fvad_set_mode(instance, AGGRESSIVENESS);
  lib._fvad_set_sample_rate(instance, rate);
  const frameLength = (rate * VAD_FRAME_MS) / 1000;
  const frame = lib._malloc(frameLength * 2);
  let pending = new Int16Array(0);

  const atRate = (samples: Int16Array): Int16Array => {
    if (!resampler) return samples;
    const floats = new Float32Array(samples.length);
    for (let i = 0; i < samples.length; i++) floats[i] = samples[i]! / 0x8000;
    const out = resampler.push(floats);
    const ints = new Int16Array(out.length);
    for (let i = 0; i < out.length; i++) ints[i] = Math.max(-0x8000, Math.min(0x7fff, Math.round(out[i]! * 0x8000)));
    return ints;
  };

  return {
    push(samples) {
      const incoming = atRate(samples);
      const joined = new Int16Array(pending.length + incoming.length);
      joined.set(pending);
      joined.set(incoming, pending.length);
      const decisions: boolean[] = [];
      let at = 0;
      for (; at + frameLength <= joined.length; at += frameLength) {
        lib.HEAP16.set(joined.subarray(at, at + frameLength), frame >> 1);
        decisions.push(lib._fvad_process(instance, frame, frameLength) === 1);
      }
      pending = joined.slice(at);
      return decisions;
    },
    close() {
      if (!instance) return;
      lib._fvad_free(instance);
      lib._free(frame);
      resampler?.close();
      instance = 0;
    },
  };
}
