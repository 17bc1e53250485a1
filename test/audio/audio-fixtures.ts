// Real audio for the tests, made on the spot: speech from espeak-ng (a WAV), the same as FLAC through
// sox, and a tone longer than llamux takes. Debian: apt-get install espeak-ng sox (.ci/run does).
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "llamux-audio-"));

function run(command: string[]): void {
  const result = Bun.spawnSync(command, { stdout: "ignore", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${command[0]} failed (is it installed? apt-get install espeak-ng sox): ${result.stderr.toString()}`);
}

const cache = new Map<string, string>();

function made(name: string, make: (path: string) => void): string {
  let path = cache.get(name);
  if (!path) {
    path = join(dir, name);
    make(path);
    cache.set(name, path);
  }
  return path;
}

/** A WAV of espeak-ng speaking `text` (22,050 Hz mono; libmtmd resamples it to 16 kHz). */
export function speechWavPath(text = "Hello, this is a short test of audio input."): string {
  return made(`speech-${Bun.hash(text)}.wav`, (path) => run(["espeak-ng", "-w", path, text]));
}

export function speechWav(text?: string): Uint8Array {
  return new Uint8Array(readFileSync(speechWavPath(text)));
}

/** The same speech as FLAC, through sox. */
export function speechFlac(): Uint8Array {
  return new Uint8Array(readFileSync(made("speech.flac", (path) => run(["sox", speechWavPath(), path]))));
}

/** A WAV tone of `seconds` at 16 kHz (16-bit mono: 32 KB a second). */
export function toneWav(seconds: number): Uint8Array {
  return new Uint8Array(readFileSync(made(`tone-${seconds}.wav`, (path) => run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", path, "synth", String(seconds), "sine", "440"]))));
}

/**
 * A WAV (16 kHz mono) longer than one 30-second chunk whose two chunks differ: 30 s of a 440 Hz tone,
 * then 6 s of `tail`, espeak-ng speech or another tone. Clips with different tails differ only after 30 s.
 */
export function longClipWavPath(tail: { speech: string } | { toneHz: number }): string {
  const key = "speech" in tail ? `speech-${Bun.hash(tail.speech)}` : `tone-${tail.toneHz}`;
  return made(`long-${key}.wav`, (path) => {
    // -D: no dither, so that the same clip comes out byte for byte the same every time
    const sox16k = ["-D", "-r", "16000", "-c", "1", "-b", "16"];
    const head = made("tone-30-16k.wav", (p) => run(["sox", "-n", ...sox16k, p, "synth", "30", "sine", "440"]));
    const end = made(`tail-${key}.wav`, (p) => run("speech" in tail
      ? ["sox", speechWavPath(tail.speech), ...sox16k, p, "pad", "0", "6", "trim", "0", "6"]
      : ["sox", "-n", ...sox16k, p, "synth", "6", "sine", String(tail.toneHz)]));
    run(["sox", head, end, path]);
  });
}

/** Tokens the tiny Qwen2-Audio-type projector gives one clip of up to 30 s (3000 mel frames, /2 by the convolution, /2 by pooling). */
export const AUDIO_TOKENS_PER_CHUNK = 750;
