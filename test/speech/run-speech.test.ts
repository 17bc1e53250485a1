// `llamux run MODEL "text" --output FILE`: a text-to-speech model (the tiny Qwen3-TTS backbone with its
// projector beside it as mmproj-*.gguf) speaks into a file whose extension picks the format, through the
// local engine and through a running `llamux serve` (its /v1/audio/speech).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { llamux } from "../cli/cli-fixture.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { speechWavPath } from "../audio/audio-fixtures.ts";
import { decodeSpeech } from "./speech-decode.ts";

const RATE = 24000;
const SAMPLES_PER_FRAME = 1920;
const FRAMES = 3;
let dir: string;
let model: string;
let server: RunningServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-speech-run-"));
  model = join(dir, "tiny-tts.gguf");
  symlinkSync(await ensureModel("tiny-qwen3tts"), model);
  symlinkSync(await ensureModel("tiny-qwen3tts-mmproj"), join(dir, "mmproj-tiny-tts.gguf"));
  server = await startServer([model, "--profile", "a", "--ctx-size", "2048", "--threads", "2", "--parallel", "1"]);
}, 600_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ LLAMUX_MODELS: join(dir, "store") });
const speak = ["Hello there, this is a test.", "-n", String(FRAMES), "--seed", "7", "--ctx-size", "2048", "--threads", "2"];

test("the local engine speaks into a WAV file", async () => {
  const out = join(dir, "local.wav");
  const result = await llamux(["run", model, ...speak, "--output", out], env());
  expect(result.stderr).toContain(`of wav to ${out}`);
  expect(result.exitCode).toBe(0);
  expect(decodeSpeech(new Uint8Array(readFileSync(out)), "wav", RATE).length).toBe(FRAMES * SAMPLES_PER_FRAME);
}, 600_000);

test("a running server speaks into an MP3 file (LAME's padding aside)", async () => {
  const out = join(dir, "served.mp3");
  const result = await llamux(["run", model, ...speak, "--output", out], { ...env(), LLAMUX_HOST: `127.0.0.1:${server.port}` });
  expect(result.exitCode).toBe(0);
  const samples = decodeSpeech(new Uint8Array(readFileSync(out)), "mp3", RATE).length;
  expect(samples).toBeGreaterThanOrEqual(FRAMES * SAMPLES_PER_FRAME);
  expect(samples - FRAMES * SAMPLES_PER_FRAME).toBeLessThanOrEqual(576 + 529 + 576);
}, 600_000);

test("--voice names a speaker file in LLAMUX_VOICES; a name nothing answers to is an error naming the voices there are", async () => {
  const voices = join(dir, "voices");
  mkdirSync(voices, { recursive: true });
  copyFileSync(speechWavPath(), join(voices, "narrator.wav"));
  const withVoices = { ...env(), LLAMUX_VOICES: voices };
  const [own, voiced] = [join(dir, "own-voice.pcm"), join(dir, "narrator.pcm")];
  expect((await llamux(["run", model, ...speak, "--output", own], withVoices)).exitCode).toBe(0);
  const result = await llamux(["run", model, ...speak, "--output", voiced, "--voice", "narrator"], withVoices);
  expect(result.exitCode).toBe(0);
  const [ownBytes, voicedBytes] = [readFileSync(own), readFileSync(voiced)];
  expect(voicedBytes.length).toBe(FRAMES * SAMPLES_PER_FRAME * 2);
  expect(voicedBytes.equals(ownBytes)).toBe(false);

  const unknown = await llamux(["run", model, "Hi", "--output", join(dir, "nobody.wav"), "--voice", "nobody"], withVoices);
  expect(unknown.exitCode).toBe(1);
  expect(unknown.stderr).toMatch(/Voice "nobody" is not available: this server has the speaker files .*"narrator"/);
}, 600_000);

test("a file type with no encoder, a speed out of range and --speed without --output are usage errors", async () => {
  const badType = await llamux(["run", model, "Hi", "--output", join(dir, "x.aac")], env());
  expect(badType.exitCode).not.toBe(0);
  expect(badType.stderr).toContain("name a .wav, .mp3, .flac, .opus (or .ogg) or .pcm file");
  const badSpeed = await llamux(["run", model, "Hi", "--output", join(dir, "x.wav"), "--speed", "9"], env());
  expect(badSpeed.stderr).toContain("--speed must be from 0.25 to 4");
  const alone = await llamux(["run", model, "Hi", "--speed", "2"], env());
  expect(alone.stderr).toContain("--speed and --voice go with --output FILE");
});
