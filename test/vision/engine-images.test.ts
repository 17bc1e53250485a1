// Images in the engine, in-process on real libllama + libmtmd: the tiny LLaVA-type projector with the
// tiny llama and LFM2 models, real JPEG and PNG files, raw RGB bitmaps.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Engine } from "../../src/engine/engine.ts";
import type { EngineImage } from "../../src/engine/types.ts";
import { runRequest as run } from "../fixtures/engine-run.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

const IMAGE_TOKENS = 16; // the tiny projector: 56x56 pixels in 14x14 patches
const fixture = (name: string) => join(import.meta.dir, "..", "fixtures", "images", name);
const fileImage = async (name: string): Promise<EngineImage> => ({ kind: "file", bytes: new Uint8Array(await Bun.file(fixture(name)).arrayBuffer()) });
const solidImage = (value: number): EngineImage => ({ kind: "rgb", width: 8, height: 8, pixels: new Uint8Array(8 * 8 * 3).fill(value) });

const greedy = { temperature: 0 };

describe("llama model with the tiny projector", () => {
  let engine: Engine;
  let marker: string;
  beforeAll(async () => {
    engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), projectorPath: await ensureModel("tiny-mmproj"), parallel: 4, contextPerSequence: 512, threads: 2 });
    marker = engine.info.vision!.mediaMarker;
  });
  afterAll(() => engine.dispose());

  test("the model info names the projector and a random media marker", async () => {
    expect(engine.info.vision!.projectorPath).toBe(await ensureModel("tiny-mmproj"));
    expect(marker).toMatch(/^<__media_[0-9a-f]{32}__>$/);
  });

  test("a JPEG and a PNG: generation completes and the prompt count includes the image tokens", async () => {
    const textOnly = await run(engine, { prompt: "Describe this picture", maxTokens: 4, sampling: greedy, ignoreEos: true });
    const images = [await fileImage("python-16.jpg"), await fileImage("llama1-icon.png")];
    const withImages = await run(engine, { prompt: `${marker}${marker}Describe this picture`, images, maxTokens: 4, sampling: greedy, ignoreEos: true });
    expect(withImages.error).toBeUndefined();
    expect(withImages.done!.finishReason).toBe("length");
    expect(withImages.tokens).toBe(4);
    expect(withImages.done!.usage.promptTokens).toBe(textOnly.done!.usage.promptTokens + 2 * IMAGE_TOKENS);
  });

  test("an image seen again is encoded once, and the same turn again reuses the cached sequence", async () => {
    const image = solidImage(101);
    const before = (await engine.stats()).imageEncodes;
    const twice = await run(engine, { prompt: `${marker} and ${marker}: the same?`, images: [image, image], maxTokens: 2, sampling: greedy });
    expect(twice.error).toBeUndefined();
    expect(engine.stats().imageEncodes).toBe(before + 1);
    const again = await run(engine, { prompt: `${marker} and ${marker}: the same?`, images: [image, image], maxTokens: 2, sampling: greedy });
    expect(engine.stats().imageEncodes).toBe(before + 1);
    expect(again.done!.usage.cachedPromptTokens).toBeGreaterThanOrEqual(2 * IMAGE_TOKENS);
  });

  test("the same image in a different slot gives the same tokens as a fresh encode", async () => {
    const image = solidImage(7);
    const prompt = `${marker}What is it?`;
    const first = await run(engine, { prompt, images: [image], maxTokens: 6, sampling: greedy, ignoreEos: true });
    // Busy the slot holding that prompt so the next request starts in another one, from the embedding cache.
    const [other, second] = await Promise.all([
      run(engine, { prompt, images: [image], maxTokens: 6, sampling: greedy, ignoreEos: true }),
      run(engine, { prompt, images: [image], maxTokens: 6, sampling: greedy, ignoreEos: true }),
    ]);
    expect(first.error ?? other.error ?? second.error).toBeUndefined();
    expect(second.done!.usage.completionTokens).toBe(6);
    expect(other.ids).toEqual(first.ids);
    expect(second.ids).toEqual(first.ids);
  });

  test("text sequences keep decoding while images are encoded, one image per step", async () => {
    const encodesSeen = new Set<number>();
    const text = run(engine, { prompt: "Tell me a long story", maxTokens: 60, sampling: greedy, ignoreEos: true }, () => encodesSeen.add(engine.stats().imageEncodes));
    // Let the text request start generating first.
    while (encodesSeen.size === 0) await Bun.sleep(1);
    const start = engine.stats().imageEncodes;
    const images = [solidImage(11), solidImage(22), solidImage(33)];
    const vision = await run(engine, { prompt: `${marker}${marker}${marker}Three colours`, images, maxTokens: 2, sampling: greedy });
    const textDone = await text;
    expect(vision.error).toBeUndefined();
    expect(textDone.tokens).toBe(60);
    expect(engine.stats().imageEncodes).toBe(start + 3);
    // The text request produced tokens between the first and the second encode, and between the second and third.
    expect(encodesSeen.has(start + 1)).toBe(true);
    expect(encodesSeen.has(start + 2)).toBe(true);
  });

  test("bad image input is refused as invalid_request", async () => {
    const garbage: EngineImage = { kind: "file", bytes: new TextEncoder().encode("this is not an image at all") };
    const undecodable = await run(engine, { prompt: `${marker}hi`, images: [garbage], maxTokens: 2 });
    expect(undecodable.error?.code).toBe("invalid_request");
    expect(undecodable.error?.message).toContain("image 1");
    const count = await run(engine, { prompt: "no marker here", images: [solidImage(1)], maxTokens: 2 });
    expect(count.error?.code).toBe("invalid_request");
    const endsWithImage = await run(engine, { prompt: `look: ${marker}`, images: [solidImage(1)], maxTokens: 2 });
    expect(endsWithImage.error?.code).toBe("invalid_request");
    const badRgb = await run(engine, { prompt: `${marker}hi`, images: [{ kind: "rgb", width: 4, height: 4, pixels: new Uint8Array(5) }], maxTokens: 2 });
    expect(badRgb.error?.code).toBe("invalid_request");
    // The engine still works.
    const fine = await run(engine, { prompt: `${marker}hi`, images: [solidImage(2)], maxTokens: 2, sampling: greedy });
    expect(fine.error).toBeUndefined();
  });
});

describe("models without and with a projector", () => {
  test("a model loaded without a projector refuses images and says why", async () => {
    const engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 256, threads: 2 });
    try {
      expect(engine.info.vision).toBeUndefined();
      const outcome = await run(engine, { prompt: "<__media__>hi", images: [solidImage(1)], maxTokens: 2 });
      expect(outcome.error?.code).toBe("invalid_request");
      expect(outcome.error?.message).toContain("no vision support");
    } finally {
      engine.dispose();
    }
  });

  test("a hybrid (LFM2) model takes an image next to a text request", async () => {
    const engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), projectorPath: await ensureModel("tiny-mmproj"), parallel: 2, contextPerSequence: 256, threads: 2 });
    try {
      const marker = engine.info.vision!.mediaMarker;
      const [vision, text] = await Promise.all([
        run(engine, { prompt: `${marker}What is this?`, images: [await fileImage("python-16.jpg")], maxTokens: 4, sampling: greedy, ignoreEos: true }),
        run(engine, { prompt: "Hello there", maxTokens: 8, sampling: greedy, ignoreEos: true }),
      ]);
      expect(vision.error ?? text.error).toBeUndefined();
      expect(vision.tokens).toBe(4);
      expect(text.tokens).toBe(8);
    } finally {
      engine.dispose();
    }
  });
});
