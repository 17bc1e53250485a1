import { Output, BufferTarget, Mp3OutputFormat, FlacOutputFormat, OggOutputFormat, AudioSampleSource, AudioSample, registerEncoder, CustomAudioEncoder, EncodedPacket } from "mediabunny";
import { registerMp3Encoder } from "@mediabunny/mp3-encoder";
import { registerFlacEncoder } from "@mediabunny/flac-encoder";
import OpusScript from "opusscript";
registerMp3Encoder(); registerFlacEncoder();
const rate = 24000;
const n = 24000 + 1234;
const pcm = new Float32Array(n); for (let i = 0; i < n; i++) pcm[i] = 0.5 * Math.sin(i * 2 * Math.PI * 440 / rate);

class OpusEncoder extends CustomAudioEncoder {
  static override supports(codec: string, config: any) { return codec === "opus" && config.numberOfChannels === 1; }
  enc!: OpusScript; frame = 0; pending = new Int16Array(0); ts = 0; first = true;
  init() { this.enc = new OpusScript(this.config.sampleRate as 24000, 1, OpusScript.Application.AUDIO, { wasm: false }); this.frame = this.config.sampleRate / 50; }
  emit(frame: Int16Array, realSamples: number) {
    const data = this.enc.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength) as any, this.frame);
    const meta = this.first ? { decoderConfig: { codec: "opus", numberOfChannels: 1, sampleRate: this.config.sampleRate, description: head(this.config.sampleRate) } } : undefined;
    this.first = false;
    this.onPacket(new EncodedPacket(new Uint8Array(data), "key", this.ts / this.config.sampleRate, realSamples / this.config.sampleRate), meta as any);
    this.ts += this.frame;
  }
  encode(s: AudioSample) {
    const buf = new Int16Array(s.numberOfFrames); s.copyTo(buf, { format: "s16", planeIndex: 0 });
    const all = new Int16Array(this.pending.length + buf.length); all.set(this.pending); all.set(buf, this.pending.length);
    let at = 0; for (; at + this.frame <= all.length; at += this.frame) this.emit(all.subarray(at, at + this.frame), this.frame);
    this.pending = all.slice(at);
  }
  flush() { if (this.pending.length) { const f = new Int16Array(this.frame); f.set(this.pending); this.emit(f, this.pending.length); this.pending = new Int16Array(0); } }
  close() { this.enc?.delete(); }
}
function head(rate: number) { const b = new Uint8Array(19); const v = new DataView(b.buffer); b.set(new TextEncoder().encode("OpusHead")); b[8] = 1; b[9] = 1; v.setUint16(10, 312, true); v.setUint32(12, rate, true); return b; }
registerEncoder(OpusEncoder as any);

for (const [name, format, codec] of [["opus", new OggOutputFormat(), "opus"]] as const) {
  const t0 = performance.now();
  const output = new Output({ format: format as any, target: new BufferTarget() });
  const src = new AudioSampleSource({ codec: codec as any, bitrate: 64000 });
  output.addAudioTrack(src);
  console.log("start", name); await output.start(); console.log("started");
  for (let at = 0; at < n; at += 5000) await src.add(new AudioSample({ data: pcm.subarray(at, Math.min(n, at + 5000)), format: "f32", numberOfChannels: 1, sampleRate: rate, timestamp: at / rate }));
  console.log("added"); src.close();
  await output.finalize();
  const bytes = new Uint8Array(output.target.buffer!);
  await Bun.write(`.proto/out.${name}`, bytes);
  console.log(name, bytes.length, (performance.now() - t0).toFixed(0), "ms");
}
