// Conversations in process on the tiny LFM2 model: the four-step tool-call flow with calls forced by
// toolChoice, read by each parser and with parsing off, and failures as Error responses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  AlternateFunctionCallParser, Chunk, ChatMessage, ChatMessageContent, Complete, DefaultFunctionCallParser, FunctionCalls, GenerationError, ModelRunner,
} from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { collect, runToolFlow, weatherFunction, zoneFunction, type ConversationFactory } from "./tool-flow.ts";

// A ChatML template that teaches Hermes-style calls, so the forced grammar uses <tool_call> JSON.
const HERMES_TEMPLATE = `{{- bos_token -}}
{%- if tools -%}<|im_start|>system
Tools: {{ tools | tojson }}. Call one as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>
{% endif -%}
{%- for message in messages -%}<|im_start|>{{ message.role }}
{% if message.tool_calls %}{% for call in message.tool_calls %}<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
</tool_call>{% endfor %}{% else %}{{ message.content }}{% endif %}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt -%}<|im_start|>assistant
{% endif -%}`;

let lfm2: ModelRunner;
let hermes: ModelRunner;
let modelPath: string;

const factory = (runner: () => ModelRunner): ConversationFactory => ({
  create: (systemPrompt) => runner().createConversation(systemPrompt),
  fromHistory: (history) => runner().createConversationFromHistory(history),
});

beforeAll(async () => {
  modelPath = await ensureModel("tiny-lfm2");
  lfm2 = await ModelRunner.load(modelPath, { contextSize: 512, parallel: 1 });
  hermes = await ModelRunner.load(modelPath, { contextSize: 512, parallel: 1, chatTemplate: HERMES_TEMPLATE });
}, 120_000);

afterAll(async () => {
  await lfm2.unload();
  await hermes.unload();
});

describe("tool-call flow in process", () => {
  test("DefaultFunctionCallParser reads the model's pythonic calls", async () => {
    const first = await runToolFlow(factory(() => lfm2), { functionCallParser: new DefaultFunctionCallParser() });
    expect(first.filter((r) => r instanceof Chunk).map((r) => (r as Chunk).text).join("")).toBe("");
  }, 240_000);

  test("AlternateFunctionCallParser reads Hermes JSON calls of a model whose template teaches them", async () => {
    await runToolFlow(factory(() => hermes), { functionCallParser: new AlternateFunctionCallParser() }, zoneFunction);
  }, 240_000);

  test("with parsing off the raw call text arrives as Chunks and no FunctionCalls is emitted", async () => {
    const first = await runToolFlow(factory(() => lfm2), { functionCallParser: null }, zoneFunction);
    const text = first.filter((r) => r instanceof Chunk).map((r) => (r as Chunk).text).join("");
    expect(text).toMatch(/^<\|tool_call_start\|>\[get_time\(zone="(utc|cet)"\s*\)\]<\|tool_call_end\|>$/);
    expect((first.at(-1) as Complete).fullMessage.text).toBe(text);
  }, 240_000);

  test("the grammar follows the model's syntax whatever parser reads: the Alternate parser sees no calls in LFM2 output", async () => {
    const conversation = lfm2.createConversation("sys");
    conversation.registerFunction(weatherFunction);
    const responses = await collect(conversation.generateResponse("hi", { toolChoice: "required", functionCallParser: new AlternateFunctionCallParser(), maxTokens: 3, seed: 2 }));
    expect(responses.some((r) => r instanceof FunctionCalls)).toBe(false);
    // LFM2's call opening (hermes would start "<tool"); sampled character by character or as the special token
    expect(responses.filter((r) => r instanceof Chunk).map((r) => (r as Chunk).text).join("")).toMatch(/^<\|t/);
  });

  test("a named toolChoice forces that function", async () => {
    const conversation = lfm2.createConversation("sys");
    conversation.registerFunction(weatherFunction);
    conversation.registerFunction({ name: "get_time", description: "Current time", parameters: [] });
    // The call's longest spelling is 48 characters (`<|tool_call_start|>[get_time()]<|tool_call_end|>`), +1 end token.
    const responses = await collect(conversation.generateResponse("hi", { toolChoice: { name: "get_time" }, maxTokens: 64, seed: 3 }));
    const calls = responses.find((r) => r instanceof FunctionCalls) as FunctionCalls;
    expect(calls.functionCalls.map((c) => [c.name, c.arguments])).toEqual([["get_time", {}]]);
  }, 240_000);
});

describe("errors arrive as MessageResponse.Error", () => {
  test("a named toolChoice that is not registered", async () => {
    const conversation = lfm2.createConversation("sys");
    conversation.registerFunction(weatherFunction);
    const responses = await collect(conversation.generateResponse("hi", { toolChoice: { name: "nope" } }));
    expect(responses).toHaveLength(1);
    expect(responses[0]).toBeInstanceOf(GenerationError);
    expect((responses[0] as GenerationError).message).toBe('Cannot force a call of "nope": no function of that name is registered');
    expect(conversation.history).toHaveLength(1);
  });

  test("audio content on a model without an audio projector names the model", async () => {
    const conversation = lfm2.createConversation();
    const message = new ChatMessage({ role: "user", content: [ChatMessageContent.audio(new Uint8Array([0, 1]))] });
    const [response] = await collect(conversation.generateResponse(message));
    expect(response).toBeInstanceOf(GenerationError);
    expect((response as GenerationError).message).toBe(`Cannot use audio content with model "${modelPath}": it has no audio projector (put an mmproj-*.gguf with an audio encoder next to it or pass projectorPath)`);
  });

  test("an empty conversation with no message", async () => {
    const [response] = await collect(lfm2.createConversation().generateResponse());
    expect((response as GenerationError).message).toContain("the conversation is empty");
  });

  test("an invalid function name is rejected at registration", () => {
    expect(() => lfm2.createConversation().registerFunction({ name: "9lives", description: "", parameters: [] })).toThrow("a name has only letters, digits and underscores");
  });
});

test("leaving the stream early cancels generation and the conversation can go on", async () => {
  const conversation = lfm2.createConversation("sys");
  let chunks = 0;
  for await (const response of conversation.generateResponse("Tell me a long story", { maxTokens: 2000, seed: 4 })) {
    if (response instanceof Chunk && ++chunks === 3) break;
  }
  expect(conversation.history).toHaveLength(1); // an unfinished exchange does not join the history
  const responses = await collect(conversation.generateResponse({ role: "user", content: "Short one" }, { maxTokens: 4 }));
  expect(responses.at(-1)).toBeInstanceOf(Complete);
  expect(conversation.history.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
});

test("aborting the signal ends the stream with an Error and leaves the history as it was", async () => {
  const conversation = lfm2.createConversation("sys");
  const controller = new AbortController();
  const responses = [];
  for await (const response of conversation.generateResponse("Tell me a long story", { maxTokens: 2000, seed: 6 }, { signal: controller.signal })) {
    responses.push(response);
    if (responses.length === 2) controller.abort();
  }
  expect(responses.at(-1)).toBeInstanceOf(GenerationError);
  expect((responses.at(-1) as GenerationError).message).toBe("Generation was aborted");
  expect(responses.length).toBeLessThan(10);
  expect(conversation.history).toHaveLength(1);
});
