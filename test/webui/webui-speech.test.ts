// The web UI's chat with a text-to-speech model: a real `llamux serve --profile c` serving the tiny
// Qwen3-TTS model (its projector beside it as mmproj-*.gguf), driven by Debian's Chromium through
// playwright-core. The answer is an audio player whose source is the spoken WAV, with a duration.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { launchChromium } from "./browser.ts";

const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts", "webui");
const FRAMES = 3;
const SECONDS_PER_FRAME = 0.08;
let dir: string;
let server: RunningServer;
let browser: Browser;
let page: Page;
const policyViolations: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "llamux-webui-speech-"));
  const model = join(dir, "tiny-tts.gguf");
  symlinkSync(await ensureModel("tiny-qwen3tts"), model);
  symlinkSync(await ensureModel("tiny-qwen3tts-mmproj"), join(dir, "mmproj-tiny-tts.gguf"));
  server = await startServer([model, "--profile", "c", "--parallel", "1", "--threads", "2", "--ctx-size", "2048"], { LLAMUX_MODELS: join(dir, "store") });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the chat plays a speech model's answer: an audio element with the WAV and a nonzero duration", async () => {
  await page.goto(`${server.baseUrl}/ui`);
  await page.getByRole("tab", { name: "Chat" }).click();
  const option = page.locator("#chat-model option", { hasText: "speech" });
  await option.waitFor({ state: "attached" });
  await page.locator("#chat-model").selectOption(await option.getAttribute("value") ?? "");
  await page.getByLabel("Max tokens").fill(String(FRAMES));
  await page.locator("#chat-input").fill("Hello there, this is a test.");
  const requestSeen = page.waitForRequest((r) => r.url().endsWith("/v1/audio/speech"));
  await page.getByRole("button", { name: "Send" }).click();
  const sent = JSON.parse((await requestSeen).postData() ?? "{}") as { input: string; response_format: string; max_frames: number };
  expect(sent).toMatchObject({ input: "Hello there, this is a test.", response_format: "wav", max_frames: FRAMES });
  const audio = page.getByLabel("Spoken answer");
  await audio.waitFor({ timeout: 300_000 });
  expect(await audio.getAttribute("src")).toStartWith("data:audio/wav;base64,");
  const duration = await audio.evaluate((element) => new Promise<number>((resolve, reject) => {
    const media = element as unknown as { readyState: number; duration: number; error: { message: string } | null; addEventListener(type: string, listener: () => void, options: { once: boolean }): void };
    if (media.readyState >= 1) return resolve(media.duration);
    media.addEventListener("loadedmetadata", () => resolve(media.duration), { once: true });
    media.addEventListener("error", () => reject(new Error(`the audio did not load: ${media.error?.message ?? "unknown error"}`)), { once: true });
  }));
  expect(duration).toBeCloseTo(FRAMES * SECONDS_PER_FRAME, 2);
  await page.screenshot({ path: join(ARTIFACTS, "chat-speech.png"), fullPage: true });
  expect(policyViolations).toEqual([]);
}, 600_000);
