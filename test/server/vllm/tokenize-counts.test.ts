// POST /tokenize renders through the orchestrator as the completion routes do, so its count is what they
// report as usage.prompt_tokens for the same input, on every kind of model: a text model (with tools), one
// whose vocabulary adds BOS, a stored model with a SYSTEM layer, a vision model with images and an audio
// model with a clip (each image's or clip's embedding tokens counted as chat counts them). In-process
// (Hono's app.request) on real engines and generated models.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hono } from "hono";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { ModelManager } from "../../../src/engine/model-manager.ts";
import { createApp } from "../../../src/server/app.ts";
import { ModelService } from "../../../src/server/model-service.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { createModel } from "../../../src/store/create-model.ts";
import { ModelStore } from "../../../src/store/model-store.ts";
import { speechWav } from "../../audio/audio-fixtures.ts";

const TEXT = "org/tiny";
const BOS = "org/tiny-lfm2";
const VISION = "org/tiny-vision";
const AUDIO = "org/tiny-audio";
const STORED = "terse-tiny";

let manager: ModelManager;
let app: Hono;
let storeDir: string;

beforeAll(async () => {
  const [llama, lfm2, vision, audio] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-lfm2"), ensureModel("tiny-mmproj"), ensureModel("tiny-audio-mmproj")]);
  storeDir = mkdtempSync(join(tmpdir(), "llamux-tokenize-"));
  const store = ModelStore.open({ root: storeDir });
  await createModel(store, STORED, { from: llama, system: "You answer in one short sentence, and never more than that." });
  manager = new ModelManager();
  const models = new ModelService(manager, [
    { path: llama, name: TEXT }, { path: lfm2, name: BOS },
    { path: llama, name: VISION, projectorPath: vision }, { path: llama, name: AUDIO, projectorPath: audio },
  ], { parallel: 2, contextPerSequence: 1024, store });
  app = createApp({ profile: profiles.b, models });
}, 180_000);

afterAll(async () => {
  await manager?.stopAll();
  rmSync(storeDir, { recursive: true, force: true });
});

const post = async (path: string, body: unknown) => {
  const response = await app.request(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json as Record<string, unknown>;
};

const tokenize = async (body: Record<string, unknown>) => (await post("/tokenize", body)) as { count: number; tokens: number[] };
const chatPromptTokens = async (body: Record<string, unknown>) =>
  ((await post("/v1/chat/completions", { ...body, max_tokens: 1, temperature: 0 })).usage as { prompt_tokens: number }).prompt_tokens;

const image = async (name: string) => {
  const bytes = new Uint8Array(await Bun.file(join(import.meta.dir, "..", "..", "fixtures", "images", name)).arrayBuffer());
  return { type: "image_url", image_url: { url: `data:image/${name.endsWith(".png") ? "png" : "jpeg"};base64,${Buffer.from(bytes).toString("base64")}` } };
};

const tools = [{
  type: "function",
  function: { name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
}];

describe("/tokenize counts what the completion routes report as prompt_tokens", () => {
  test("a text model, with tools and without, and one whose vocabulary adds BOS", async () => {
    const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "What is the weather in Paris?" }];
    for (const body of [{ model: TEXT, messages }, { model: TEXT, messages, tools }, { model: BOS, messages }]) {
      const { count, tokens } = await tokenize(body);
      expect(count).toBe(tokens.length);
      expect(count).toBe(await chatPromptTokens(body));
    }
  }, 120_000);

  test("a stored model's SYSTEM enters the counted prompt, as it enters the chat's", async () => {
    const body = { model: STORED, messages: [{ role: "user", content: "Hi" }] };
    const stored = await tokenize(body);
    expect(stored.count).toBe(await chatPromptTokens(body));
    expect(stored.count).toBeGreaterThan((await tokenize({ model: TEXT, messages: body.messages })).count + 5);
  }, 120_000);

  test("a vision model: each image's embedding tokens count as the chat counts them", async () => {
    const one = { model: VISION, messages: [{ role: "user", content: [{ type: "text", text: "What is in this picture?" }, await image("python-16.jpg")] }] };
    const two = { model: VISION, messages: [{ role: "user", content: [await image("llama1-icon.png"), { type: "text", text: "And these two?" }, await image("python-16.jpg")] }] };
    for (const body of [one, two]) {
      const { count, tokens } = await tokenize(body);
      expect(count).toBe(await chatPromptTokens(body));
      expect(count).toBeGreaterThan(tokens.length);
    }
  }, 120_000);

  test("an audio model: a clip's embedding tokens count as the chat counts them", async () => {
    const clip = { type: "input_audio", input_audio: { data: Buffer.from(speechWav("Good morning.")).toString("base64"), format: "wav" } };
    const body = { model: AUDIO, messages: [{ role: "user", content: [{ type: "text", text: "What was said?" }, clip] }] };
    const { count, tokens } = await tokenize(body);
    expect(count).toBe(await chatPromptTokens(body));
    expect(count).toBeGreaterThan(tokens.length);
  }, 120_000);

  test("the prompt form counts what a text completion reports", async () => {
    for (const model of [TEXT, BOS]) {
      const { count } = await tokenize({ model, prompt: "Once upon a time" });
      const completion = await post("/v1/completions", { model, prompt: "Once upon a time", max_tokens: 1, temperature: 0 });
      expect(count).toBe((completion.usage as { prompt_tokens: number }).prompt_tokens);
    }
  }, 120_000);
});
