import { timeStretch } from "../src/audio/speech/time-stretch.ts";
for (const speed of [0.25, 0.5, 2, 4]) {
  const s = await timeStretch(24000, speed);
  let n = 0; const x = new Float32Array(2400).map((_, i) => Math.sin(i / 5));
  for (let k = 0; k < 10; k++) n += s.push(x).length;
  n += s.end().length;
  console.log(speed, n, 24000 / speed);
}
