import OpusScript from "opusscript";
for (const wasm of [false, true]) {
  let t = performance.now();
  const e = new OpusScript(24000, 1, OpusScript.Application.AUDIO, { wasm });
  console.log("init", wasm, (performance.now() - t).toFixed(0));
  t = performance.now();
  const f = new Int16Array(480); for (let i = 0; i < 480; i++) f[i] = Math.round(8000 * Math.sin(i / 7));
  for (let k = 0; k < 500; k++) e.encode(f as any, 480);
  console.log("10s", wasm, (performance.now() - t).toFixed(0));
}
