// @ts-ignore
import Flac from "libflacjs/dist/libflac.js";
const t0 = performance.now();
if (!Flac.isReady()) await new Promise((r) => Flac.on("ready", r));
console.log("ready", performance.now() - t0);
const rate = 24000, n = 25234;
const enc = Flac.create_libflac_encoder(rate, 1, 16, 5, n, false, 0);
const parts: Uint8Array[] = [];
let meta: any;
const st = Flac.init_encoder_stream(enc, (data: Uint8Array) => parts.push(data.slice()), (m: any) => { meta = m; });
console.log("init", st);
const pcm = new Int32Array(n); for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin(i / 7));
const t1 = performance.now();
for (let at = 0; at < n; at += 5000) { const c = pcm.subarray(at, Math.min(n, at + 5000)); console.log("ok", Flac.FLAC__stream_encoder_process_interleaved(enc, c, c.length), parts.length); }
console.log("finish", Flac.FLAC__stream_encoder_finish(enc), performance.now() - t1);
Flac.FLAC__stream_encoder_delete(enc);
const total = parts.reduce((a, p) => a + p.length, 0);
const out = new Uint8Array(total); let at = 0; for (const p of parts) { out.set(p, at); at += p.length; }
await Bun.write(".proto/out.flac", out);
console.log(total, meta?.total_samples);
