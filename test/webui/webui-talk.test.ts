// The chat's "Talk" button, end to end: a real `llamux serve --profile c` with an API key and a
// --realtime-config whose default preset names the tiny Qwen3-TTS model as the voice, the tiny llama model
// with its audio projector as the model that hears, and Debian's Chromium with a fake microphone that
// plays an espeak-ng clip once (Chromium's --use-file-for-fake-audio-capture, "%noloop"). The page opens
// /v1/realtime itself (the key as the openai-insecure-api-key subprotocol), streams the microphone as
// pcm16 at 24 kHz, and the frames it sends and receives are read from Chromium's side of the socket.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { launchChromium } from "./browser.ts";

const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts", "webui");
const KEY = "webui-talk-key";
const RATE = 24_000;
let dir: string;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "llamux-webui-talk-"));
  // each model in a folder of its own, its projector beside it as mmproj-*.gguf
  mkdirSync(join(dir, "hears"));
  mkdirSync(join(dir, "voice"));
  const model = join(dir, "hears", "tiny-audio.gguf");
  const voice = join(dir, "voice", "tiny-tts.gguf");
  const [llama, audioProjector, tts, ttsProjector] = await Promise.all([
    ensureModel("tiny-llama"), ensureModel("tiny-audio-mmproj"), ensureModel("tiny-qwen3tts"), ensureModel("tiny-qwen3tts-mmproj"),
  ]);
  symlinkSync(llama, model);
  symlinkSync(audioProjector, join(dir, "hears", "mmproj-tiny-audio.gguf"));
  symlinkSync(tts, voice);
  symlinkSync(ttsProjector, join(dir, "voice", "mmproj-tiny-tts.gguf"));
  // four frames of speech a reply (0.32 s), drawn alike every run
  writeFileSync(join(dir, "realtime.json"), JSON.stringify({
    default: "voice",
    presets: { voice: { voice_model: voice, instructions: "Answer briefly.", speech: { max_frames: 4, seed: 7, temperature: 0.7, top_p: 0.9, top_k: 20 } } },
  }));
  // the microphone: half a second of silence, the words, then silence long enough for the reply
  const clip = join(dir, "microphone.wav");
  const made = Bun.spawnSync(["bash", "-c", `espeak-ng --stdout "Hello, can you hear me?" | sox -t wav - -r 48000 -c 1 -b 16 ${clip} pad 0.5 8`]);
  if (made.exitCode !== 0) throw new Error(`espeak-ng or sox failed: ${made.stderr.toString()}`);
  // one thread an engine: on a busy 2-core machine ggml's two threads wait for each other at every node
  server = await startServer([model, "--profile", "c", "--parallel", "2", "--threads", "1", "--ctx-size", "2048", "--api-key", KEY, "--realtime-config", join(dir, "realtime.json")], { LLAMUX_MODELS: join(dir, "store") });
  browser = await launchChromium([
    "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", `--use-file-for-fake-audio-capture=${clip}%noloop`,
    "--autoplay-policy=no-user-gesture-required",
  ]);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Frame = { type: string; [field: string]: unknown };

test("Talk: the page streams the microphone to /v1/realtime, the server hears a turn and answers, the page shows the reply's words and plays its audio", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript((key) => localStorage.setItem("llamux.apiKey", key), KEY);
  const page = await context.newPage();
  const policyViolations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
  });
  const sent: Frame[] = [];
  const received: Frame[] = [];
  let replied: (frame: Frame) => void;
  const responseDone = new Promise<Frame>((resolve) => (replied = resolve));
  const opened = new Promise<string>((resolve) => page.on("websocket", (socket) => {
    socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Frame));
    socket.on("framereceived", ({ payload }) => {
      const frame = JSON.parse(String(payload)) as Frame;
      received.push(frame);
      if (frame.type === "response.done") replied(frame);
    });
    resolve(socket.url());
  }));

  await page.goto(`${server.baseUrl}/ui`);
  await page.getByRole("tab", { name: "Chat" }).click();
  // the served model, chosen once the list has come
  const model = await (await page.waitForFunction('document.getElementById("chat-model")?.value || undefined', undefined, { timeout: 60_000 })).jsonValue() as string;
  await page.getByLabel("Max tokens").fill("8");
  await page.getByRole("button", { name: "Talk", exact: true }).click();
  expect(await opened).toBe(`${server.baseUrl.replace("http", "ws")}/v1/realtime?model=${encodeURIComponent(model)}`);

  // the reply: all of its audio played, its words on the page
  const reply = page.getByRole("article", { name: "Spoken reply" });
  const done = await Promise.race([responseDone, Bun.sleep(240_000).then(() => undefined)]);
  // the tiny model's words rarely end before Max tokens does: either way the reply ran to its end
  expect(["completed", "incomplete"]).toContain(String((done?.response as { status?: string } | undefined)?.status));
  const audioOut = received.filter((frame) => frame.type === "response.output_audio.delta").reduce((bytes, frame) => bytes + Buffer.from(frame.delta as string, "base64").length, 0);
  expect(audioOut).toBeGreaterThan(0);
  const playedText = `Played ${(audioOut / 2 / RATE).toFixed(2)} s of audio`;
  await page.getByText(playedText, { exact: true }).waitFor({ timeout: 60_000 });
  await page.screenshot({ path: join(ARTIFACTS, "chat-talk.png"), fullPage: true });
  await page.getByRole("button", { name: "Stop talking" }).click();
  await page.getByRole("button", { name: "Talk", exact: true }).waitFor();

  // what the page sent: its settings, then the microphone as pcm16 with the words in it
  expect(sent[0]).toMatchObject({ type: "session.update", session: { type: "realtime", max_output_tokens: 8, audio: { input: { format: { type: "audio/pcm", rate: RATE } } } } });
  const audioIn = sent.filter((frame) => frame.type === "input_audio_buffer.append").map((frame) => Buffer.from(frame.audio as string, "base64"));
  const samples = new Int16Array(new Uint8Array(Buffer.concat(audioIn)).buffer);
  expect(samples.length).toBeGreaterThan(RATE); // more than a second went out
  expect(samples.reduce((peak, sample) => Math.max(peak, Math.abs(sample)), 0)).toBeGreaterThan(3000); // and it was not silence

  // what the server did: one turn heard, committed and answered in speech
  const types = received.map((frame) => frame.type);
  const order = ["session.created", "session.updated", "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed", "response.created", "response.output_audio.delta", "response.done"];
  const at = order.map((type) => types.indexOf(type));
  expect(at.every((index) => index >= 0)).toBe(true);
  expect(at).toEqual([...at].sort((a, b) => a - b));
  expect(received.filter((frame) => frame.type === "error")).toEqual([]);

  // what the page shows: the reply's words as the server spoke them, and how long its audio played
  const transcript = received.find((frame) => frame.type === "response.output_audio_transcript.done")!.transcript as string;
  expect(transcript.length).toBeGreaterThan(0);
  expect((await reply.first().locator(".content").textContent())?.trim()).toBe(transcript.trim());
  expect(policyViolations).toEqual([]);
  await context.close();
}, 600_000);
