// Audio parts in SDK conversations: user and tool messages of a model with an audio projector (tiny
// llama with the tiny Qwen2-Audio-type projector, speech from espeak-ng), and clear errors where audio
// cannot go.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ChatMessage, ChatMessageContent, GenerationError, ModelRunner } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { collect, promptTokens } from "../sdk/tool-flow.ts";
import { AUDIO_TOKENS_PER_CHUNK, speechWav } from "./audio-fixtures.ts";
import { flacClaimingHugeLength, mp3ClaimingHugeLength, wavAt1Hz } from "./hostile-audio.ts";

let runner: ModelRunner;
let wav: Uint8Array;

beforeAll(async () => {
  runner = await ModelRunner.load(await ensureModel("tiny-llama"), { projectorPath: await ensureModel("tiny-audio-mmproj"), contextSize: 2048, parallel: 1 });
  wav = speechWav();
}, 120_000);

afterAll(async () => {
  await runner?.unload();
});

test("audio in a user message and in a tool message reaches the audio encoder", async () => {
  const textOnly = await collect(runner.createConversation().generateResponse("What was said?", { maxTokens: 2, temperature: 0 }));
  const withAudio = await collect(runner.createConversation().generateResponse(
    new ChatMessage({ role: "user", content: [ChatMessageContent.audio(wav), new ChatMessageContent.Text("What was said?")] }), { maxTokens: 2, temperature: 0 },
  ));
  expect(promptTokens(withAudio)).toBeGreaterThanOrEqual(promptTokens(textOnly) + AUDIO_TOKENS_PER_CHUNK);

  const conversation = runner.createConversationFromHistory([
    { role: "user", content: "Record the room" },
    { role: "assistant", content: "", functionCalls: [{ name: "record", arguments: {} }] },
    new ChatMessage({ role: "tool", content: [ChatMessageContent.audio(Buffer.from(wav).toString("base64"), "audio/wav")] }),
  ]);
  expect(promptTokens(await collect(conversation.generateResponse(undefined, { maxTokens: 2 })))).toBeGreaterThan(AUDIO_TOKENS_PER_CHUNK);

  // OpenAI-style input_audio parts in a plain message
  const plain = await collect(runner.createConversation().generateResponse({ role: "user", content: [{ type: "input_audio", input_audio: { data: Buffer.from(wav).toString("base64"), format: "wav" } }, { type: "text", text: "and?" }] }, { maxTokens: 1 }));
  expect(promptTokens(plain)).toBeGreaterThan(AUDIO_TOKENS_PER_CHUNK);
});

test("audio in an assistant message, undecodable audio, and an image for an audio-only projector are refused", async () => {
  const assistant = await collect(runner.createConversationFromHistory([new ChatMessage({ role: "assistant", content: [ChatMessageContent.audio(wav)] })]).generateResponse("and?"));
  expect((assistant[0] as GenerationError).message).toBe("Cannot use audio content in assistant messages: audio goes in user and tool messages");
  const garbage = await collect(runner.createConversation().generateResponse({ role: "user", content: [ChatMessageContent.audio(new TextEncoder().encode("RIFF....WAVEjunkjunkjunk")), new ChatMessageContent.Text("x")] }));
  expect(garbage.at(-1)).toBeInstanceOf(GenerationError);
  expect((garbage.at(-1) as GenerationError).message).toContain("Cannot use audio 1");
  const image = await collect(runner.createConversation().generateResponse({ role: "user", content: [ChatMessageContent.image(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))] }));
  expect((image[0] as GenerationError).message).toContain("has no vision projector");
  // still serving
  expect(promptTokens(await collect(runner.createConversation().generateResponse("hi", { maxTokens: 1 })))).toBeGreaterThan(0);
});

test("AudioContent whose header promises hours is refused before the decoder allocates for it; the runner keeps serving", async () => {
  // the engine runs in a Worker of this process: a decoder that allocated 64 GB would abort the process
  for (const bytes of [wavAt1Hz(), flacClaimingHugeLength(), mp3ClaimingHugeLength()]) {
    const refused = await collect(runner.createConversation().generateResponse({ role: "user", content: [ChatMessageContent.audio(bytes), new ChatMessageContent.Text("x")] }));
    expect(refused.at(-1)).toBeInstanceOf(GenerationError);
    expect((refused.at(-1) as GenerationError).message).toMatch(/^Cannot use audio 1: its header says [\d.e+]+ seconds, longer than the 300 allowed$/);
  }
  expect(promptTokens(await collect(runner.createConversation().generateResponse("hi", { maxTokens: 1 })))).toBeGreaterThan(0);
});

test("audio for a model without an audio projector names the model", async () => {
  const text = await ModelRunner.load(await ensureModel("tiny-lfm2"), { contextSize: 256, parallel: 1 });
  try {
    const [response] = await collect(text.createConversation().generateResponse({ role: "user", content: [ChatMessageContent.audio(wav)] }));
    expect(response).toBeInstanceOf(GenerationError);
    expect((response as GenerationError).message).toStartWith(`Cannot use audio content with model "${await ensureModel("tiny-lfm2")}": it has no audio projector`);
  } finally {
    await text.unload();
  }
});
