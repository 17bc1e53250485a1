// Speech end to end over real HTTP on loopback: the tiny Qwen3-TTS model (backbone and projector) on
// profiles a, b and c through the official `openai` client and plain fetch; every response_format decoded
// back with ffmpeg; chunked and SSE streams against the whole answer; a client that leaves mid-stream;
// and the requests that must be refused with a 400 in the profile's shape. The same seed gives the same
// samples, so every answer is compared with one whole PCM answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { SPEECH_FORMATS, type SpeechFormat } from "../../src/audio/speech/speech-encoder.ts";
import { MAX_SPEECH_TEXT_CHARS } from "../../src/generation/speech-spec.ts";
import { startProfileApps, type ProfileApps } from "../fixtures/profile-apps.ts";
import { speechWavPath } from "../audio/audio-fixtures.ts";
import { decodeSpeech } from "./speech-decode.ts";

const SPEECH_MODEL = "tiny-tts";
const TEXT_MODEL = "tiny-text";
const RATE = 24000;
const SAMPLES_PER_FRAME = 1920;
/** LAME's delay and last-granule padding at 24 kHz (see speech-encoding.test.ts). */
const MP3_PADDING = 576 + 529 + 576;
/** A short, reproducible speech: the random-weight model rarely ends one itself. */
const SHORT = { seed: 7, temperature: 0.7, top_p: 0.9, top_k: 20, max_frames: 4 };
const TEXT = "Hello there, this is a test of speech.";

let apps: ProfileApps;
const voices = mkdtempSync(join(tmpdir(), "llamux-voices-"));

beforeAll(async () => {
  const [backbone, projector, llama] = await Promise.all([ensureModel("tiny-qwen3tts"), ensureModel("tiny-qwen3tts-mmproj"), ensureModel("tiny-llama")]);
  copyFileSync(speechWavPath(), join(voices, "narrator.wav"));
  writeFileSync(join(voices, "broken.wav"), "this is text, not a WAV file");
  apps = startProfileApps(
    [{ path: backbone, name: SPEECH_MODEL, projectorPath: projector }, { path: llama, name: TEXT_MODEL }],
    { parallel: 1, contextPerSequence: 2048, threads: 2 },
    { voicesDir: voices },
  );
}, 600_000);

afterAll(() => apps?.stop());

const url = (profile: "a" | "b" | "c") => `${apps.base[profile]}/v1/audio/speech`;
const post = (profile: "a" | "b" | "c", body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(url(profile), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());

let reference: Int16Array | undefined;
/** The whole answer as raw PCM: the samples every other format must decode back to. */
async function referencePcm(): Promise<Int16Array> {
  if (!reference) {
    const response = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: "pcm", ...SHORT });
    expect(response.status).toBe(200);
    reference = decodeSpeech(await bytesOf(response), "pcm", RATE);
  }
  return reference;
}

describe("POST /v1/audio/speech", () => {
  test("the openai client's audio.speech.create works on profiles a, b and c (WAV of the frames asked for)", async () => {
    const expected = await referencePcm();
    expect(expected.length).toBe(SHORT.max_frames * SAMPLES_PER_FRAME);
    for (const profile of ["a", "b", "c"] as const) {
      const client = new OpenAI({ baseURL: `${apps.base[profile]}/v1`, apiKey: "placeholder", maxRetries: 0 });
      const response = await client.audio.speech.create({ model: SPEECH_MODEL, input: TEXT, voice: "alloy", response_format: "wav", ...SHORT } as OpenAI.Audio.SpeechCreateParams);
      expect(response.headers.get("content-type")).toBe("audio/wav");
      const decoded = decodeSpeech(new Uint8Array(await response.arrayBuffer()), "wav", RATE);
      expect(Buffer.from(decoded.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    }
  }, 300_000);

  test("every response_format decodes back to the same number of samples (mp3: plus LAME's padding)", async () => {
    const expected = await referencePcm();
    const counts: Partial<Record<SpeechFormat, number>> = {};
    for (const format of SPEECH_FORMATS) {
      const response = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: format, ...SHORT });
      expect(response.status).toBe(200);
      counts[format] = decodeSpeech(await bytesOf(response), format, RATE).length;
    }
    expect(counts.pcm).toBe(expected.length);
    expect(counts.wav).toBe(expected.length);
    expect(counts.flac).toBe(expected.length);
    expect(counts.opus).toBe(expected.length);
    expect(counts.mp3! - expected.length).toBeGreaterThanOrEqual(0);
    expect(counts.mp3! - expected.length).toBeLessThanOrEqual(MP3_PADDING);
    expect(expected.length).toBe(SHORT.max_frames * SAMPLES_PER_FRAME);
  }, 300_000);

  test("a chunked stream (stream_format audio) and SSE deliver the whole answer's audio", async () => {
    const expected = await referencePcm();
    const chunked = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: "wav", stream_format: "audio", ...SHORT });
    expect(chunked.status).toBe(200);
    const fromChunks = decodeSpeech(await bytesOf(chunked), "wav", RATE);
    expect(Buffer.from(fromChunks.buffer).equals(Buffer.from(expected.buffer))).toBe(true);

    const sse = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: "pcm", stream_format: "sse", ...SHORT });
    expect(sse.headers.get("content-type")).toStartWith("text/event-stream");
    const events = (await sse.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
    const deltas = events.filter((event) => event.type === "speech.audio.delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(events.at(-1).type).toBe("speech.audio.done");
    expect(events.at(-1).usage.output_tokens).toBe(SHORT.max_frames);
    expect(events.at(-1).usage.total_tokens).toBe(events.at(-1).usage.input_tokens + SHORT.max_frames);
    expect(events.at(-1).finish_reason).toBe("length");
    const pcm = Buffer.concat(deltas.map((event) => Buffer.from(event.audio, "base64")));
    expect(pcm.equals(Buffer.from(expected.buffer))).toBe(true);
  }, 300_000);

  test("speed stretches the audio (Sonic): 2 gives about half the samples", async () => {
    const expected = await referencePcm();
    for (const speed of [2]) {
      const response = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: "pcm", speed, ...SHORT });
      const samples = decodeSpeech(await bytesOf(response), "pcm", RATE).length;
      expect(Math.abs(samples - expected.length / speed)).toBeLessThan(expected.length * 0.05);
    }
  }, 300_000);

  test("a voice names a speaker file: the speech differs from the model's own voice", async () => {
    const expected = await referencePcm();
    const response = await post("b", { model: SPEECH_MODEL, input: TEXT, voice: "narrator", response_format: "pcm", ...SHORT });
    expect(response.status).toBe(200);
    const withVoice = decodeSpeech(await bytesOf(response), "pcm", RATE);
    expect(withVoice.length).toBe(expected.length);
    expect(Buffer.from(withVoice.buffer).equals(Buffer.from(expected.buffer))).toBe(false);
  }, 300_000);

  test("a client that leaves mid-stream frees the sequence: the next speech completes", async () => {
    const controller = new AbortController();
    const response = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: "pcm", stream_format: "audio", ...SHORT, max_frames: 4096 }, controller.signal);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    controller.abort();
    await reader.cancel().catch(() => undefined);
    const next = await post("b", { model: SPEECH_MODEL, input: TEXT, response_format: "pcm", ...SHORT });
    expect(next.status).toBe(200);
    expect((await bytesOf(next)).length).toBe(SHORT.max_frames * SAMPLES_PER_FRAME * 2);
  }, 300_000);
});

describe("listings say the model speaks", () => {
  test("Ollama's /api/show and LM Studio's /api/v0 and /api/v1 models name speech; a text model's do not", async () => {
    const show = async (model: string) => (await (await fetch(`${apps.base.a}/api/show`, { method: "POST", body: JSON.stringify({ model }) })).json()) as { capabilities: string[] };
    expect((await show(SPEECH_MODEL)).capabilities).toContain("speech");
    // its projector's speaker encoder reads reference voices: not audio input
    expect((await show(SPEECH_MODEL)).capabilities).not.toContain("audio");
    expect((await show(TEXT_MODEL)).capabilities).not.toContain("speech");
    const v0 = (await (await fetch(`${apps.base.c}/api/v0/models`)).json()) as { data: Array<{ id: string; capabilities?: string[] }> };
    expect(v0.data.find((m) => m.id.includes(SPEECH_MODEL))?.capabilities).toContain("speech");
    expect(v0.data.find((m) => m.id.includes(TEXT_MODEL))?.capabilities ?? []).not.toContain("speech");
    const v1 = (await (await fetch(`${apps.base.c}/api/v1/models`)).json()) as { models: Array<{ key: string; capabilities?: { speech?: boolean } }> };
    expect(v1.models.find((m) => m.key.includes(SPEECH_MODEL))?.capabilities?.speech).toBe(true);
    expect(v1.models.find((m) => m.key.includes(TEXT_MODEL))?.capabilities?.speech).toBeUndefined();
  });
});

describe("refused speech requests: a 400 in each profile's shape", () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["empty input", { input: "" }, /input must not be empty/],
    ["input over the limit", { input: "a".repeat(MAX_SPEECH_TEXT_CHARS + 1) }, /at most 4096/],
    ["unknown voice", { voice: "nobody" }, /Voice "nobody" is not available: .*"narrator"/],
    ["a speaker file that is not audio", { voice: "broken" }, /not a WAV, MP3 or FLAC/],
    ["a text model", { model: TEXT_MODEL }, /has no speech output/],
    ["an unsupported response_format", { response_format: "aac" }, /response_format "aac" is not supported: use one of mp3, opus, flac, wav, pcm/],
    ["speed out of range", { speed: 5 }, /speed must be a number from 0.25 to 4/],
    ["instructions the pipeline cannot take", { instructions: "whisper" }, /takes no instructions/],
    ["a bad stream_format", { stream_format: "ndjson" }, /stream_format "ndjson" is not supported/],
    // within the character limit, but one token a digit: more than the 2,048 positions of the context
    ["input whose prompt leaves no room in the context", { input: "0123456789".repeat(300) }, /prompt takes \d+ positions and the model's context has 2048/],
  ];
  for (const profile of ["a", "b", "c"] as const) {
    test(`profile ${profile}`, async () => {
      for (const [what, change, message] of cases) {
        const response = await post(profile, { model: SPEECH_MODEL, input: TEXT, ...SHORT, ...change });
        const body = await response.json() as { error: { message: string } | string };
        const text = typeof body.error === "string" ? body.error : body.error.message;
        expect({ what, status: response.status, text }).toEqual({ what, status: 400, text: expect.stringMatching(message) });
      }
    }, 300_000);
  }

  test("an unknown voice is the `voice` field's error (OpenAI's param)", async () => {
    const response = await post("b", { model: SPEECH_MODEL, input: TEXT, ...SHORT, voice: "nobody" });
    expect(response.status).toBe(400);
    const body = await response.json() as { error: { message: string; param: string | null } };
    expect(body.error.param).toBe("voice");
  });

  test("an input that cannot fit the context is the `input` field's error, streamed or not", async () => {
    for (const stream_format of [undefined, "audio", "sse"]) {
      const response = await post("b", { model: SPEECH_MODEL, input: "0123456789".repeat(300), ...SHORT, ...(stream_format ? { stream_format } : {}) });
      expect({ stream_format, status: response.status }).toEqual({ stream_format, status: 400 });
      const body = await response.json() as { error: { message: string; param: string | null } };
      expect(body.error.param).toBe("input");
    }
  }, 300_000);
});
