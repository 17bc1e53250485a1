// Speech through the SDK, in this process: a Conversation on the tiny Qwen3-TTS model streams
// AudioSamples as frames are decoded and completes with a WAV audio part; the vLLM-like LLM's speech()
// returns the samples (and stretches them with `speed`).
import { beforeAll, expect, test } from "bun:test";
import { AudioContent, AudioSample, Complete, LLM, ModelRunner, type MessageResponse } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { decodeSpeech } from "./speech-decode.ts";

const RATE = 24000;
const SAMPLES_PER_FRAME = 1920;
const FRAMES = 3;
let backbone: string;
let projector: string;

beforeAll(async () => {
  [backbone, projector] = await Promise.all([ensureModel("tiny-qwen3tts"), ensureModel("tiny-qwen3tts-mmproj")]);
}, 600_000);

test("a conversation on a speech model streams AudioSamples, then Complete with the WAV", async () => {
  const runner = await ModelRunner.load(backbone, { projectorPath: projector, contextSize: 2048, parallel: 1 });
  try {
    const responses: MessageResponse[] = [];
    for await (const response of runner.createConversation().generateResponse("Hello there, this is a test.", { maxTokens: FRAMES, seed: 7 })) responses.push(response);
    const samples = responses.filter((r): r is AudioSample => r instanceof AudioSample);
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every((s) => s.sampleRate === RATE)).toBe(true);
    const total = samples.reduce((sum, s) => sum + s.samples.length, 0);
    expect(total).toBe(FRAMES * SAMPLES_PER_FRAME);
    const complete = responses.at(-1);
    expect(complete).toBeInstanceOf(Complete);
    const part = (complete as Complete).fullMessage.content[0];
    expect(part).toBeInstanceOf(AudioContent);
    expect((part as AudioContent).mimeType).toBe("audio/wav");
    expect(decodeSpeech((part as AudioContent).data, "wav", RATE).length).toBe(total);
    expect((complete as Complete).finishReason).toBe("length");
    expect((complete as Complete).stats.completionTokens).toBe(FRAMES);
  } finally {
    await runner.unload();
  }
}, 600_000);

test("LLM.speech returns each text's samples; speed 2 halves them", async () => {
  const llm = new LLM({ model: backbone, mmproj: projector, max_model_len: 2048, threads: 2 });
  try {
    const [plain, faster] = [(await llm.speech("Hello there.", { seed: 7, max_frames: FRAMES }))[0]!, (await llm.speech(["Hello there."], { seed: 7, max_frames: FRAMES, speed: 2 }))[0]!];
    expect(plain.sample_rate).toBe(RATE);
    expect(plain.samples.length).toBe(FRAMES * SAMPLES_PER_FRAME);
    expect(plain.frames).toBe(FRAMES);
    expect(plain.finish_reason).toBe("length");
    expect(Math.abs(faster.samples.length - plain.samples.length / 2)).toBeLessThan(plain.samples.length * 0.05);
    await expect(llm.speech("x", { speed: 9 })).rejects.toThrow(/speed must be a number from 0.25 to 4/);
  } finally {
    await llm.dispose();
  }
}, 600_000);
