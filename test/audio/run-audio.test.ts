// `llamux run` with a typed audio path: a model file with an audio projector beside it as
// mmproj-*.gguf, answered by the local engine and by a running `llamux serve` (profile a, through
// /api/chat's `audio` extension), with --verbose showing that the prompt counts the audio's tokens.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { llamux } from "../cli/cli-fixture.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { AUDIO_TOKENS_PER_CHUNK, speechWavPath } from "./audio-fixtures.ts";

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
