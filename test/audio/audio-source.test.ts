// Audio bytes before the engine: signatures, base64, the size bound, and lengths read from headers.
import { describe, expect, test } from "bun:test";
import { audioSeconds } from "../../src/audio/audio-duration.ts";
import { AudioInputError, audioFromBase64, audioFromFile, sniffAudioFormat } from "../../src/audio/audio-source.ts";
import { MAX_AUDIO_BYTES } from "../../src/audio/audio-limits.ts";
import { transcriptionTokens } from "../../src/server/openai/transcriptions.ts";
import { speechFlac, speechWav, speechWavPath, toneWav } from "./audio-fixtures.ts";

describe("audio sources", () => {
  test("signatures: WAV, FLAC, MP3 (ID3 or a frame sync), nothing else", () => {
    expect(sniffAudioFormat(speechWav())).toBe("wav");
    expect(sniffAudioFormat(speechFlac())).toBe("flac");
    expect(sniffAudioFormat(new Uint8Array([0x49, 0x44, 0x33, 4, 0]))).toBe("mp3");
    expect(sniffAudioFormat(new Uint8Array([0xff, 0xfb, 0x90, 0]))).toBe("mp3");
    expect(sniffAudioFormat(new TextEncoder().encode("just some text"))).toBeUndefined();
  });

  test("base64 with or without a data: prefix; bad base64, a bad format name and non-audio are refused", () => {
    const wav = speechWav();
    const text = Buffer.from(wav).toString("base64");
    expect(audioFromBase64(text, "wav")).toEqual(wav);
    expect(audioFromBase64(`data:audio/wav;base64,${text}`)).toEqual(wav);
    expect(() => audioFromBase64("%%%", "wav")).toThrow(/not valid base64/);
    expect(() => audioFromBase64(text, "ogg")).toThrow(/format "ogg" is not supported/);
    expect(() => audioFromBase64(Buffer.from("hello").toString("base64"))).toThrow(AudioInputError);
    expect(() => audioFromBase64("A".repeat(Math.ceil(MAX_AUDIO_BYTES / 3) * 4 + 8))).toThrow(/allowed/);
  });

  test("files on disk", async () => {
    expect(await audioFromFile(speechWavPath())).toEqual(speechWav());
    await expect(audioFromFile("/nonexistent/clip.wav")).rejects.toThrow(/ENOENT/);
  });

  test("lengths from WAV and FLAC headers bound a transcription's tokens", () => {
    expect(audioSeconds(toneWav(3))).toBeCloseTo(3, 3);
    const speech = audioSeconds(speechWav())!;
    expect(speech).toBeGreaterThan(1);
    expect(audioSeconds(speechFlac())).toBeCloseTo(speech, 3);
    expect(audioSeconds(new Uint8Array([0x49, 0x44, 0x33, 4, 0]))).toBeUndefined();
    expect(transcriptionTokens(toneWav(3))).toBe(64 + 24);
    expect(transcriptionTokens(new Uint8Array([0x49, 0x44, 0x33, 4, 0]))).toBe(2048);
  });
});
