// Opus for Mediabunny's Ogg muxer: libopus (opusscript's WebAssembly build) registered as a custom
// encoder. Samples are cut into 20 ms frames; the last frame is padded with silence, and the packet
// durations tell the muxer how much of the end to drop, so the Ogg file decodes to exactly the samples
// given (the pre-skip covers the encoder's look-ahead at the start).
import { CustomAudioEncoder, EncodedPacket, registerEncoder, type AudioSample } from "mediabunny";
import opusNativeFactory, { type OpusNative } from "opusscript/build/opusscript_native_wasm.js";
import opusWasmPath from "opusscript/build/opusscript_native_wasm.wasm" with { type: "file" };
import { readFileSync } from "node:fs";

/** Sample rates libopus encodes at. */
export const OPUS_SAMPLE_RATES = [8000, 12000, 16000, 24000, 48000];
const APPLICATION_AUDIO = 2049;
const OPUS_SET_BITRATE = 4002;
/** libopus's look-ahead in application AUDIO: 6.5 ms, stated at 48 kHz as the Ogg Opus pre-skip is. */
const PRE_SKIP_48K = 312;
const MAX_PACKET_BYTES = 1276 * 3;
const BITRATE = 48_000;

let native: OpusNative | undefined;
function opusNative(): OpusNative {
  native ??= opusNativeFactory({ wasmBinary: new Uint8Array(readFileSync(opusWasmPath)) });
  return native;
}

/** The Ogg Opus identification header (RFC 7845 §5.1) of a mono stream. */
function opusHead(sampleRate: number): Uint8Array {
  const head = new Uint8Array(19);
  const view = new DataView(head.buffer);
  head.set(new TextEncoder().encode("OpusHead"));
  head[8] = 1; // version
  head[9] = 1; // channels
  view.setUint16(10, PRE_SKIP_48K, true);
  view.setUint32(12, sampleRate, true);
  view.setInt16(16, 0, true); // output gain
  head[18] = 0; // channel mapping family: mono or stereo
  return head;
}

class OpusEncoder extends CustomAudioEncoder {
  private handler: InstanceType<OpusNative["OpusScriptHandler"]> | undefined;
  private frameSize = 0;
  private inputPointer = 0;
  private outputPointer = 0;
  /** Samples not yet a whole frame. */
  private pending = new Int16Array(0);
  /** Samples encoded so far, at the input rate. */
  private encoded = 0;
  /** Samples given so far, plus the look-ahead that must come out before the real end. */
  private given = 0;
  private described = false;

  static override supports(codec: string, config: { numberOfChannels: number; sampleRate: number }): boolean {
    return codec === "opus" && config.numberOfChannels === 1 && OPUS_SAMPLE_RATES.includes(config.sampleRate);
  }

  init(): void {
    const opus = opusNative();
    this.frameSize = this.config.sampleRate / 50;
    this.handler = new opus.OpusScriptHandler(this.config.sampleRate, 1, APPLICATION_AUDIO);
    this.handler._encoder_ctl(OPUS_SET_BITRATE, BITRATE);
    // the handler reads the frame's bytes one per 16-bit slot (what opusscript's own wrapper writes)
    this.inputPointer = opus._malloc(this.frameSize * 2 * 2);
    this.outputPointer = opus._malloc(MAX_PACKET_BYTES);
  }

  encode(sample: AudioSample): void {
    const samples = new Int16Array(sample.numberOfFrames);
    sample.copyTo(samples, { format: "s16", planeIndex: 0 });
    this.given += samples.length;
    const all = new Int16Array(this.pending.length + samples.length);
    all.set(this.pending);
    all.set(samples, this.pending.length);
    let at = 0;
    for (; at + this.frameSize <= all.length; at += this.frameSize) this.encodeFrame(all.subarray(at, at + this.frameSize), undefined);
    this.pending = all.slice(at);
  }

  flush(): void {
    // the look-ahead is still inside the encoder: push silence until the real end has come out
    const lookAhead = Math.round((PRE_SKIP_48K * this.config.sampleRate) / 48000);
    const end = this.given + lookAhead;
    while (this.encoded < end) {
      const frame = new Int16Array(this.frameSize);
      const take = Math.min(this.pending.length, this.frameSize);
      frame.set(this.pending.subarray(0, take));
      this.pending = this.pending.slice(take);
      this.encodeFrame(frame, Math.min(this.frameSize, end - this.encoded));
    }
    this.pending = new Int16Array(0);
  }

  close(): void {
    if (!this.handler) return;
    const opus = opusNative();
    opus.OpusScriptHandler.destroy_handler(this.handler);
    opus._free(this.inputPointer);
    opus._free(this.outputPointer);
    this.handler = undefined;
  }

  /** One 20 ms frame; `keep` samples of it count (the last frame's are fewer). */
  private encodeFrame(frame: Int16Array, keep: number | undefined): void {
    const opus = opusNative();
    const bytes = new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
    opus.HEAPU16.set(bytes, this.inputPointer >> 1);
    const length = this.handler!._encode(this.inputPointer, bytes.length, this.outputPointer, this.frameSize);
    if (length < 0) throw new Error(`libopus could not encode a frame (error ${length})`);
    const data = opus.HEAPU8.slice(this.outputPointer, this.outputPointer + length);
    const rate = this.config.sampleRate;
    const packet = new EncodedPacket(data, "key", this.encoded / rate, (keep ?? this.frameSize) / rate);
    const meta = this.described ? undefined : { decoderConfig: { codec: "opus", numberOfChannels: 1, sampleRate: rate, description: opusHead(rate) } };
    this.described = true;
    this.encoded += this.frameSize;
    this.onPacket(packet, meta);
  }
}

let registered = false;
/** Makes Mediabunny encode Opus with libopus (once per process). */
export function registerOpusEncoder(): void {
  if (registered) return;
  registered = true;
  registerEncoder(OpusEncoder);
}
