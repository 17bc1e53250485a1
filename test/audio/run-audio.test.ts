// `llamux run` with a typed audio path: a model file with an audio projector beside it as
// mmproj-*.gguf, answered by the local engine and by a running `llamux serve` (profile a, through
// /api/chat's `audio` extension), with --verbose showing that the prompt counts the audio's tokens.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { llamux } from "../cli/cli-fixture.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { AUDIO_TOKENS_PER_CHUNK, speechWavPath } from "./audio-fixtures.ts";
import { wavAt1Hz } from "./hostile-audio.ts";

let dir: string;
let model: string;
let server: RunningServer;

const promptCount = (text: string) => Number(/prompt eval count:\s+(\d+) token/.exec(text)?.[1] ?? Number.NaN);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-audio-run-"));
  model = join(dir, "tiny-chat.gguf");
  symlinkSync(await ensureModel("tiny-llama"), model);
  symlinkSync(await ensureModel("tiny-audio-mmproj"), join(dir, "mmproj-tiny-chat.gguf"));
  server = await startServer([model, "--profile", "a", "--ctx-size", "2048", "--threads", "2", "--parallel", "1"]);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ LLAMUX_MODELS: join(dir, "store") });

test("a typed WAV path reaches the local engine; its tokens count in the prompt", async () => {
  const wav = speechWavPath();
  const textOnly = await llamux(["run", model, "What was said?", "--verbose", "-n", "2", "--ctx-size", "2048"], env());
  expect(textOnly.exitCode).toBe(0);
  const withAudio = await llamux(["run", model, `What was said in ${wav}?`, "--verbose", "-n", "2", "--ctx-size", "2048"], env());
  expect(withAudio.stderr).not.toContain("Error");
  expect(withAudio.exitCode).toBe(0);
  expect(promptCount(withAudio.stderr)).toBeGreaterThanOrEqual(promptCount(textOnly.stderr) + AUDIO_TOKENS_PER_CHUNK);
}, 120_000);

test("a typed WAV path through a running server", async () => {
  const result = await llamux(["run", model, `Transcribe ${speechWavPath()}`, "--verbose", "-n", "2"], { ...env(), LLAMUX_HOST: `127.0.0.1:${server.port}` });
  expect(result.exitCode).toBe(0);
  expect(promptCount(result.stderr)).toBeGreaterThan(AUDIO_TOKENS_PER_CHUNK);
}, 120_000);

test("a typed WAV whose header promises 1,000,000 seconds is refused, locally and through a server", async () => {
  const path = join(dir, "lying.wav");
  writeFileSync(path, wavAt1Hz());
  for (const extra of [{}, { LLAMUX_HOST: `127.0.0.1:${server.port}` }] as Record<string, string>[]) {
    const result = await llamux(["run", model, `What is in ${path}?`, "-n", "2", "--ctx-size", "2048"], { ...env(), ...extra });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("its header says 1.000e+6 seconds, longer than the 300 allowed");
  }
  // the server's engine is still serving
  const fine = await llamux(["run", model, `Transcribe ${speechWavPath()}`, "-n", "2"], { ...env(), LLAMUX_HOST: `127.0.0.1:${server.port}` });
  expect(fine.exitCode).toBe(0);
}, 120_000);
