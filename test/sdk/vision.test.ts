// Image parts in SDK conversations: user and tool messages of a vision model (tiny llama with the tiny
// LLaVA-type projector, real image files), and clear errors where images cannot go.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { ChatMessage, ChatMessageContent, GenerationError, ModelRunner } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { collect, promptTokens } from "./tool-flow.ts";

let vision: ModelRunner;
let jpeg: Uint8Array;
let modelPath: string;

beforeAll(async () => {
  modelPath = await ensureModel("tiny-llama");
  vision = await ModelRunner.load(modelPath, { projectorPath: await ensureModel("tiny-mmproj"), contextSize: 512, parallel: 1 });
  jpeg = new Uint8Array(await Bun.file(join(import.meta.dir, "..", "fixtures", "images", "python-16.jpg")).arrayBuffer());
}, 120_000);

afterAll(async () => {
  await vision.unload();
});

test("an image in a user message and in a tool message reaches the vision encoder", async () => {
  const textOnly = await collect(vision.createConversation().generateResponse("What is this?", { maxTokens: 2, temperature: 0 }));
  const withImage = await collect(vision.createConversation().generateResponse(
    new ChatMessage({ role: "user", content: [ChatMessageContent.image(jpeg), new ChatMessageContent.Text("What is this?")] }), { maxTokens: 2, temperature: 0 },
  ));
  // The image's tokens count in the prompt (the tiny projector gives 16 per image).
  expect(promptTokens(withImage)).toBeGreaterThanOrEqual(promptTokens(textOnly) + 16);

  const conversation = vision.createConversationFromHistory([
    { role: "user", content: "Take a photo" },
    { role: "assistant", content: "", functionCalls: [{ name: "take_photo", arguments: {} }] },
    new ChatMessage({ role: "tool", content: [ChatMessageContent.image(jpeg, "image/jpeg")] }),
  ]);
  expect(promptTokens(await collect(conversation.generateResponse(undefined, { maxTokens: 2 })))).toBeGreaterThan(16);
});

test("an image in an assistant message is refused", async () => {
  const conversation = vision.createConversationFromHistory([new ChatMessage({ role: "assistant", content: [ChatMessageContent.image(jpeg)] })]);
  const [response] = await collect(conversation.generateResponse("and?"));
  expect((response as GenerationError).message).toBe("Cannot use image content in assistant messages: images go in user and tool messages");
});

test("an image for a model without a projector names the model", async () => {
  const text = await ModelRunner.load(await ensureModel("tiny-lfm2"), { contextSize: 256, parallel: 1 });
  try {
    const [response] = await collect(text.createConversation().generateResponse({ role: "user", content: [ChatMessageContent.image(jpeg)] }));
    expect(response).toBeInstanceOf(GenerationError);
    expect((response as GenerationError).message).toStartWith(`Cannot use image content with model "${await ensureModel("tiny-lfm2")}": it has no vision projector`);
  } finally {
    await text.unload();
  }
});
