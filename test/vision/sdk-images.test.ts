// Image content parts through the SDK in process: a ModelRunner on a model file with its
// mmproj-*.gguf beside it, a Conversation whose user message carries a real JPEG and a WebP.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { ChatMessage, ChatMessageContent, Complete, GenerationError, LLM, ModelRunner, SamplingParams, UnsupportedContentError, type MessageResponse } from "../../src/sdk/index.ts";

const IMAGE_TOKENS = 16;
const fixture = (name: string) => join(import.meta.dir, "..", "fixtures", "images", name);
let dir: string;
let vision: ModelRunner;
let textOnly: ModelRunner;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-vision-sdk-"));
  symlinkSync(await ensureModel("tiny-llama"), join(dir, "tiny-chat.gguf"));
  symlinkSync(await ensureModel("tiny-mmproj"), join(dir, "mmproj-tiny-chat.gguf"));
  vision = await ModelRunner.load(join(dir, "tiny-chat.gguf"), { contextSize: 512, parallel: 1, threads: 2 });
  textOnly = await ModelRunner.load(await ensureModel("tiny-llama"), { contextSize: 256, parallel: 1, threads: 2 });
}, 120_000);

afterAll(async () => {
  await vision?.unload();
  await textOnly?.unload();
  rmSync(dir, { recursive: true, force: true });
});

async function complete(runner: ModelRunner, message: ChatMessage): Promise<MessageResponse[]> {
  const responses: MessageResponse[] = [];
  for await (const response of runner.createConversation().generateResponse(message, { maxTokens: 3, temperature: 0 })) responses.push(response);
  return responses;
}

test("an image part reaches the model: its tokens count in the prompt", async () => {
  const question = new ChatMessageContent.Text("What is in the picture?");
  const plain = (await complete(vision, new ChatMessage({ role: "user", content: [question] }))).at(-1) as Complete;
  const jpeg = ChatMessageContent.image(new Uint8Array(await Bun.file(fixture("python-16.jpg")).arrayBuffer()), "image/jpeg");
  const webp = ChatMessageContent.image(new Uint8Array(await Bun.file(fixture("python-16.webp")).arrayBuffer()), "image/webp");
  const shown = (await complete(vision, new ChatMessage({ role: "user", content: [jpeg, webp, question] }))).at(-1);
  expect(shown).toBeInstanceOf(Complete);
  const stats = (shown as Complete).stats;
  expect(stats.completionTokens).toBe(3);
  expect(stats.promptTokens - plain.stats.promptTokens).toBeGreaterThanOrEqual(2 * IMAGE_TOKENS);
  expect(stats.promptTokens - plain.stats.promptTokens).toBeLessThanOrEqual(2 * IMAGE_TOKENS + 2);
});

test("a model without a projector answers an image with an error response naming the model", async () => {
  const image = ChatMessageContent.image(new Uint8Array(await Bun.file(fixture("python-16.jpg")).arrayBuffer()), "image/jpeg");
  const responses = await complete(textOnly, new ChatMessage({ role: "user", content: [image, new ChatMessageContent.Text("hi")] }));
  const error = responses.at(-1);
  expect(error).toBeInstanceOf(GenerationError);
  expect((error as GenerationError).message).toContain("no vision projector");
});

test("LLM.chat takes OpenAI image_url parts (data URIs) and refuses a loopback URL", async () => {
  await using llm = new LLM({ model: join(dir, "tiny-chat.gguf"), max_model_len: 256, max_num_seqs: 1, threads: 2 });
  const jpeg = Buffer.from(await Bun.file(fixture("python-16.jpg")).arrayBuffer()).toString("base64");
  const params = new SamplingParams({ temperature: 0, max_tokens: 3, ignore_eos: true });
  const [result] = await llm.chat([{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/jpeg;base64,${jpeg}` } }, { type: "text", text: "What is it?" }] }], params);
  expect(result!.outputs[0]!.token_ids).toHaveLength(3);
  const refused = await llm.chat([{ role: "user", content: [{ type: "image_url", image_url: { url: "http://127.0.0.1:9/a.jpg" } }] }], params).catch((e) => e);
  expect(refused).toBeInstanceOf(UnsupportedContentError);
  expect(refused.message).toContain("loopback, private or link-local");
});
