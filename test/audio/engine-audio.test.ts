// Audio in the engine, in-process on real libllama + libmtmd: the tiny Qwen2-Audio-type projector with
// the tiny llama model and real speech from espeak-ng.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { runRequest as run } from "../fixtures/engine-run.ts";
import { AUDIO_TOKENS_PER_CHUNK, speechFlac, speechWav, toneWav } from "./audio-fixtures.ts";
import { flacClaimingHugeLength, mp3ClaimingHugeLength, mp3WithFramesPastJunk, wavAt100Hz, wavAt1Hz } from "./hostile-audio.ts";

const greedy = { temperature: 0 };

describe("llama model with the tiny audio projector", () => {
  let engine: Engine;
  let marker: string;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), projectorPath: await ensureModel("tiny-audio-mmproj"), parallel: 2, contextPerSequence: 2048, threads: 2 });
    marker = engine.info.vision!.mediaMarker;
  }, 120_000);
  afterAll(() => engine?.dispose());

  test("the model info says audio, not images", () => {
    expect(engine.info.vision!.audio).toBe(true);
    expect(engine.info.vision!.images).toBe(false);
  });

  test("a spoken WAV beside a text-only request: both complete, the audio request counts the audio tokens", async () => {
    const [textOnly, withAudio] = await Promise.all([
      run(engine, { prompt: "What was said?", maxTokens: 4, sampling: greedy, ignoreEos: true }),
      run(engine, { prompt: `${marker}What was said?`, images: [{ kind: "audio", bytes: speechWav() }], maxTokens: 4, sampling: greedy, ignoreEos: true }),
    ]);
    expect(textOnly.error).toBeUndefined();
    expect(withAudio.error).toBeUndefined();
    expect(withAudio.tokens).toBe(4);
    expect(withAudio.done!.finishReason).toBe("length");
    // <|audio_bos|> and <|audio_eos|> are text around the clip's embeddings
    expect(withAudio.done!.usage.promptTokens).toBeGreaterThanOrEqual(textOnly.done!.usage.promptTokens + AUDIO_TOKENS_PER_CHUNK);
    expect(engine.stats().imageEncodes).toBeGreaterThanOrEqual(1);
  });

  test("FLAC works too", async () => {
    const outcome = await run(engine, { prompt: `${marker}What was said?`, images: [{ kind: "audio", bytes: speechFlac() }], maxTokens: 2, sampling: greedy, ignoreEos: true });
    expect(outcome.error).toBeUndefined();
    expect(outcome.done!.usage.promptTokens).toBeGreaterThan(AUDIO_TOKENS_PER_CHUNK);
  });

  test("undecodable audio, an image, and audio over the limit are refused; the engine keeps serving", async () => {
    const garbage = new Uint8Array(64).fill(7);
    garbage.set(new TextEncoder().encode("RIFF"), 0);
    garbage.set(new TextEncoder().encode("WAVE"), 8);
    const bad = await run(engine, { prompt: `${marker}x`, images: [{ kind: "audio", bytes: garbage }], maxTokens: 2 });
    expect(bad.error?.code).toBe("invalid_request");
    expect(bad.error?.message).toContain("Cannot use audio 1");
    const image = await run(engine, { prompt: `${marker}x`, images: [{ kind: "rgb", width: 4, height: 4, pixels: new Uint8Array(48) }], maxTokens: 2 });
    expect(image.error?.message).toContain("no vision encoder");
    const long = await run(engine, { prompt: `${marker}x`, images: [{ kind: "audio", bytes: toneWav(301) }], maxTokens: 2 });
    expect(long.error?.message).toContain("longer than the 300 allowed");
    const fine = await run(engine, { prompt: "still here", maxTokens: 2, sampling: greedy, ignoreEos: true });
    expect(fine.done?.finishReason).toBe("length");
  });

  test("audio whose header promises hours is refused before the decoder allocates for it; the engine keeps serving", async () => {
    // the decoder would allocate 64 GB, 640 MB, 550 GB and 6 GB of samples for these
    for (const bytes of [wavAt1Hz(), wavAt100Hz(), flacClaimingHugeLength(), mp3ClaimingHugeLength()]) {
      const refused = await run(engine, { prompt: `${marker}x`, images: [{ kind: "audio", bytes }], maxTokens: 2 });
      expect(refused.error?.code).toBe("invalid_request");
      expect(refused.error?.message).toMatch(/^Cannot use audio 1: its header says [\d.e+]+ seconds, longer than the 300 allowed$/);
    }
    // frames past a stretch of junk the server's reader gives up on: miniaudio's own count finds them
    const pastJunk = await run(engine, { prompt: `${marker}x`, images: [{ kind: "audio", bytes: mp3WithFramesPastJunk() }], maxTokens: 2 });
    expect(pastJunk.error?.message).toBe("Cannot use audio 1: the decoder would read 401.0 seconds from it, longer than the 300 allowed");
    const fine = await run(engine, { prompt: `${marker}What was said?`, images: [{ kind: "audio", bytes: speechWav() }], maxTokens: 2, sampling: greedy, ignoreEos: true });
    expect(fine.done?.finishReason).toBe("length");
  });
});
