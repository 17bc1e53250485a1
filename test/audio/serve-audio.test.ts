// Audio end to end over real HTTP on loopback: the tiny llama model with the tiny Qwen2-Audio-type
// projector on profiles a, b and c, real speech from espeak-ng, the official `openai` client for
// input_audio chat parts and /v1/audio/transcriptions, and the model listings that say `audio`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import type { ProfileName } from "../../src/server/profiles/profile.ts";
import { startProfileApps, type ProfileApps } from "../fixtures/profile-apps.ts";
import { MAX_AUDIO_BYTES } from "../../src/audio/audio-limits.ts";
import { AUDIO_TOKENS_PER_CHUNK, speechFlac, speechWav, toneWav } from "./audio-fixtures.ts";
import { flacClaimingHugeLength, mp3ClaimingHugeLength, mp3WithFramesPastJunk, wavAt100Hz, wavAt1Hz } from "./hostile-audio.ts";

const AUDIO_MODEL = "tiny-audio";
const TEXT_MODEL = "tiny-text";
let apps: ProfileApps;
let base: ProfileApps["base"];
const openai = (profile: ProfileName) => new OpenAI({ baseURL: `${base[profile]}/v1`, apiKey: "placeholder", maxRetries: 0 });
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

beforeAll(async () => {
  const [llama, projector] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-audio-mmproj")]);
  apps = startProfileApps([{ path: llama, name: AUDIO_MODEL, projectorPath: projector }, { path: llama, name: TEXT_MODEL }], { parallel: 2, contextPerSequence: 2048, threads: 2 });
  base = apps.base;
}, 120_000);

afterAll(() => apps.stop());

type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;
const audioPart = (bytes: Uint8Array, format: "wav" | "mp3" = "wav"): Part => ({ type: "input_audio", input_audio: { data: b64(bytes), format } });

describe("input_audio parts on /v1/chat/completions", () => {
  for (const profile of ["a", "b", "c"] as const) {
    test(`profile ${profile}: a spoken WAV beside a text-only request; usage counts the audio tokens`, async () => {
      const client = openai(profile);
      const ask = (content: Part[]) => client.chat.completions.create({ model: AUDIO_MODEL, messages: [{ role: "user", content }], max_tokens: 3, temperature: 0 });
      const [textOnly, withAudio] = await Promise.all([ask([{ type: "text", text: "What was said?" }]), ask([audioPart(speechWav()), { type: "text", text: "What was said?" }])]);
      expect(withAudio.choices[0]!.finish_reason).toBe("length");
      expect(withAudio.usage!.completion_tokens).toBe(3);
      expect(withAudio.usage!.prompt_tokens).toBeGreaterThanOrEqual(textOnly.usage!.prompt_tokens + AUDIO_TOKENS_PER_CHUNK);
    });
  }

  test("the Responses API takes input_audio parts as chat does; a model without audio refuses them", async () => {
    const input = (model: string) => ({
      model, max_output_tokens: 3, temperature: 0,
      input: [{ role: "user" as const, content: [{ type: "input_text", text: "What was said?" }, { type: "input_audio", input_audio: { data: b64(speechWav()), format: "wav" } }] }],
    });
    const textOnly = await openai("a").responses.create({ model: AUDIO_MODEL, max_output_tokens: 3, temperature: 0, input: "What was said?" });
    const withAudio = await openai("a").responses.create(input(AUDIO_MODEL) as never);
    expect(withAudio.usage!.output_tokens).toBe(3);
    expect(withAudio.usage!.input_tokens).toBeGreaterThanOrEqual(textOnly.usage!.input_tokens + AUDIO_TOKENS_PER_CHUNK);
    const refused = await openai("b").responses.create(input(TEXT_MODEL) as never).catch((error: unknown) => error as { status: number; message: string });
    expect((refused as { status: number }).status).toBe(400);
    expect((refused as { message: string }).message).toContain("has no audio support");
  });

  test("audio in a tool message, streamed", async () => {
    const stream = await openai("b").chat.completions.create({
      model: AUDIO_MODEL, max_tokens: 2, temperature: 0, stream: true, stream_options: { include_usage: true },
      messages: [
        { role: "user", content: "Record something" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "record", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: [audioPart(speechWav()), { type: "text", text: "recording" }] as never },
      ],
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage!.prompt_tokens).toBeGreaterThan(AUDIO_TOKENS_PER_CHUNK);
  });

  test("bad input is a 400 that says why, in each profile's shape; the model keeps serving", async () => {
    const refused = async (profile: ProfileName, model: string, content: Part[]) => {
      const error = await openai(profile).chat.completions.create({ model, messages: [{ role: "user", content }], max_tokens: 2 }).catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
      return (error as InstanceType<typeof OpenAI.APIError>).message;
    };
    expect(await refused("b", TEXT_MODEL, [audioPart(speechWav())])).toContain(`Model "${TEXT_MODEL}" has no audio support`);
    expect(await refused("a", TEXT_MODEL, [audioPart(speechWav())])).toContain("has no audio support");
    expect(await refused("b", AUDIO_MODEL, [{ type: "input_audio", input_audio: { data: "not base64!!", format: "wav" } }])).toContain("not valid base64");
    expect(await refused("b", AUDIO_MODEL, [{ type: "input_audio", input_audio: { data: b64(new TextEncoder().encode("hello there, not audio")), format: "wav" } }])).toContain("not a WAV, MP3 or FLAC");
    expect(await refused("b", AUDIO_MODEL, [{ type: "input_audio", input_audio: { data: b64(speechWav()), format: "ogg" as "wav" } }])).toContain('format "ogg" is not supported');
    const garbage = new Uint8Array(4096).fill(9);
    garbage.set(new TextEncoder().encode("RIFF"), 0);
    garbage.set(new TextEncoder().encode("WAVE"), 8);
    expect(await refused("c", AUDIO_MODEL, [audioPart(garbage), { type: "text", text: "x" }])).toContain("Cannot use audio: its WAV header has no data chunk");
    expect(await refused("b", AUDIO_MODEL, [audioPart(toneWav(301)), { type: "text", text: "x" }])).toContain("longer than the 300 allowed");
    const fine = await openai("b").chat.completions.create({ model: AUDIO_MODEL, messages: [{ role: "user", content: [audioPart(speechWav()), { type: "text", text: "ok?" }] }], max_tokens: 1 });
    expect(fine.choices[0]!.finish_reason).toBe("length");
  });
});

describe("POST /v1/audio/transcriptions", () => {
  for (const profile of ["a", "b"] as const) {
    test(`profile ${profile}: the openai client's transcription, json and text`, async () => {
      const client = openai(profile);
      const json = await client.audio.transcriptions.create({ model: AUDIO_MODEL, file: await toFile(speechWav(), "speech.wav"), language: "en", prompt: "A greeting.", temperature: 0 });
      expect(typeof json.text).toBe("string");
      const usage = (json as unknown as { usage: { type: string; input_tokens: number; output_tokens: number; total_tokens: number } }).usage;
      expect(usage.type).toBe("tokens");
      expect(usage.input_tokens).toBeGreaterThan(AUDIO_TOKENS_PER_CHUNK);
      expect(usage.output_tokens).toBeGreaterThan(0);
      const text = await client.audio.transcriptions.create({ model: AUDIO_MODEL, file: await toFile(speechFlac(), "speech.flac"), response_format: "text" });
      expect(typeof text).toBe("string");
    }, 60_000);
  }

  test("refusals: a model without audio, no file, an unsupported format, not audio, too big", async () => {
    const post = async (form: FormData) => {
      const response = await fetch(`${base.b}/v1/audio/transcriptions`, { method: "POST", body: form });
      return { status: response.status, body: (await response.json()) as { error: { message: string } } };
    };
    const form = (fields: Record<string, string | Blob>) => {
      const f = new FormData();
      for (const [key, value] of Object.entries(fields)) f.append(key, value, ...(value instanceof Blob ? ["a.wav"] : []) as []);
      return f;
    };
    const wav = new Blob([speechWav()]);
    const noAudio = await post(form({ model: TEXT_MODEL, file: wav }));
    expect(noAudio.status).toBe(400);
    expect(noAudio.body.error.message).toContain(`Model "${TEXT_MODEL}" has no audio support`);
    expect((await post(form({ model: AUDIO_MODEL }))).status).toBe(400);
    const srt = await post(form({ model: AUDIO_MODEL, file: wav, response_format: "srt" }));
    expect(srt.body.error.message).toContain("use json or text");
    const text = await post(form({ model: AUDIO_MODEL, file: new Blob(["plain text"]) }));
    expect(text.body.error.message).toContain("not a WAV, MP3 or FLAC");
    const big = new Uint8Array(MAX_AUDIO_BYTES + 1);
    big.set(speechWav().subarray(0, 44));
    const tooBig = await post(form({ model: AUDIO_MODEL, file: new Blob([big]) }));
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.message).toContain(`more than the ${MAX_AUDIO_BYTES} allowed`);
  });

  test("not on profile c (LM Studio has none)", async () => {
    const response = await fetch(`${base.c}/v1/audio/transcriptions`, { method: "POST", body: new FormData() });
    expect(response.status).toBe(404);
  });
});

describe("audio whose header promises hours (the decoder would allocate gigabytes for it)", () => {
  const hostile = { "WAV at 1 Hz": wavAt1Hz, "WAV at 100 Hz": wavAt100Hz, "FLAC of 2^36 samples": flacClaimingHugeLength, "MP3 with a Xing count": mp3ClaimingHugeLength };
  const headerSays = /its header says [\d.e+]+ seconds, longer than the 300 allowed/;

  for (const [name, make] of Object.entries(hostile)) {
    test(`${name}: a 400 in each API's shape on every route that takes audio; the model keeps serving`, async () => {
      const bytes = make();
      for (const profile of ["a", "b", "c"] as const) {
        const error = await openai(profile).chat.completions.create({ model: AUDIO_MODEL, messages: [{ role: "user", content: [audioPart(bytes), { type: "text", text: "x" }] }], max_tokens: 1 }).catch((e) => e);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
        expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(headerSays);
      }
      const responses = await openai("b").responses.create({
        model: AUDIO_MODEL, max_output_tokens: 1,
        input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: b64(bytes), format: "wav" } }] }],
      } as never).catch((e) => e);
      expect((responses as { status: number }).status).toBe(400);
      const ollamaChat = await fetch(`${base.a}/api/chat`, { method: "POST", body: JSON.stringify({ model: AUDIO_MODEL, stream: false, messages: [{ role: "user", content: "x", audio: [b64(bytes)] }] }) });
      expect(ollamaChat.status).toBe(400);
      expect(((await ollamaChat.json()) as { error: string }).error).toMatch(headerSays);
      for (const profile of ["a", "b"] as const) {
        const form = new FormData();
        form.append("model", AUDIO_MODEL);
        form.append("file", new Blob([bytes]), "clip");
        const transcription = await fetch(`${base[profile]}/v1/audio/transcriptions`, { method: "POST", body: form });
        expect(transcription.status).toBe(400);
        expect(((await transcription.json()) as { error: { message: string } }).error.message).toMatch(headerSays);
      }
      const fine = await openai("a").chat.completions.create({ model: AUDIO_MODEL, messages: [{ role: "user", content: [audioPart(speechWav()), { type: "text", text: "ok?" }] }], max_tokens: 1 });
      expect(fine.choices[0]!.finish_reason).toBe("length");
    }, 60_000);
  }

  test("MP3 frames past junk the server's reader gives up on: the engine asks the decoder itself, a 400 too", async () => {
    const error = await openai("b").chat.completions.create({ model: AUDIO_MODEL, messages: [{ role: "user", content: [audioPart(mp3WithFramesPastJunk(), "mp3"), { type: "text", text: "x" }] }], max_tokens: 1 }).catch((e) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain("the decoder would read 401.0 seconds from it, longer than the 300 allowed");
    const fine = await openai("b").chat.completions.create({ model: AUDIO_MODEL, messages: [{ role: "user", content: [audioPart(speechWav()), { type: "text", text: "ok?" }] }], max_tokens: 1 });
    expect(fine.choices[0]!.finish_reason).toBe("length");
  });
});

describe("listings say audio", () => {
  test("/api/show lists the audio capability (not vision) for the audio model only", async () => {
    const show = async (model: string) => ((await (await fetch(`${base.a}/api/show`, { method: "POST", body: JSON.stringify({ model }) })).json()) as { capabilities: string[] }).capabilities;
    const audio = await show(AUDIO_MODEL);
    expect(audio).toContain("audio");
    expect(audio).not.toContain("vision");
    expect(await show(TEXT_MODEL)).not.toContain("audio");
  });

  test("LM Studio's /api/v1/models says audio", async () => {
    const { models } = (await (await fetch(`${base.c}/api/v1/models`)).json()) as { models: { key: string; capabilities?: { audio?: boolean; vision?: boolean } }[] };
    const audio = models.find((m) => m.key === AUDIO_MODEL)!;
    expect(audio.capabilities!.audio).toBe(true);
    expect(audio.capabilities!.vision).toBe(false);
    expect(models.find((m) => m.key === TEXT_MODEL)!.capabilities!.audio).toBeUndefined();
  });
});
