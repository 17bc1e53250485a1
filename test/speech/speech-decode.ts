// Decodes speech audio back to 16-bit samples with ffmpeg (a real decoder, independent of the encoders),
// at the rate it was made at. Debian: apt-get install ffmpeg (.ci/run does).
import type { SpeechFormat } from "../../src/audio/speech/speech-encoder.ts";

/** The samples of `bytes` as ffmpeg decodes them (raw `pcm` is read as s16le mono at `sampleRate`). */
export function decodeSpeech(bytes: Uint8Array, format: SpeechFormat, sampleRate: number): Int16Array {
  const input = format === "pcm" ? ["-f", "s16le", "-ar", String(sampleRate), "-ac", "1"] : [];
  const result = Bun.spawnSync(["ffmpeg", "-v", "error", ...input, "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", String(sampleRate), "pipe:1"], { stdin: bytes, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`ffmpeg could not decode the ${format} audio: ${result.stderr.toString()}`);
  const out = result.stdout;
  return new Int16Array(out.buffer, out.byteOffset, Math.floor(out.byteLength / 2)).slice();
}
