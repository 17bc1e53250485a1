// /v1/chat/completions as pure translation, with no model, engine or server: a body (validated by the
// route's own schema) becomes the chat spec the orchestrator runs, and hand-made chat events become
// the chat.completion body and the chat.completion.chunk stream, exactly.
import { describe, expect, test } from "bun:test";
import type { ChatMessage } from "../../../src/chat/types.ts";
import { ApiError } from "../../../src/server/api-error.ts";
import type { ServedModel } from "../../../src/server/model-service.ts";
import { chatCompletionOptions, chatCompletionSpec } from "../../../src/server/openai/chat-completions.ts";
import { streamChatChoices } from "../../../src/server/openai/chat-stream.ts";
import { chatCompletionSchema } from "../../../src/server/openai/schemas.ts";
import { chatCompletionBody, toChatMessages, toUsage } from "../../../src/server/openai/translate.ts";
import { profiles, type ProfileName } from "../../../src/server/profiles/index.ts";
import { validate } from "../../../src/server/validation.ts";
import { choiceOf, collector, content, done, pathModel, reasoning, storeModel, toolCallEvents, usage } from "../translation-fixture.ts";

const hello: ChatMessage[] = [{ role: "user", content: "Hello" }];

/** The spec the route builds for this body on this profile, its messages as given. */
function specOf(profile: ProfileName, body: Record<string, unknown>, model: ServedModel = pathModel, messages = hello) {
  const parsed = validate(chatCompletionSchema, { model: model.id, messages: [{ role: "user", content: "Hello" }], ...body });
  return chatCompletionSpec(profiles[profile], model, parsed, messages, chatCompletionOptions(profiles[profile], model, parsed));
}

function refusal(profile: ProfileName, body: Record<string, unknown>): ApiError {
  try {
    specOf(profile, body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error(`${JSON.stringify(body)} was not refused`);
}

describe("chatCompletionSpec", () => {
  test("a bare body is the conversation, no tools, the profile's defaults and its reply overflow", () => {
    expect(specOf("b", {})).toEqual({
      prompt: { kind: "conversation", messages: hello, addGenerationPrompt: true },
      output: { tools: [], parallelToolCalls: true },
      options: { temperature: 1, topP: 1, topK: 0, minP: 0, repeatPenalty: 1 },
      limit: { overflow: "refuse" },
      n: 1,
    });
    expect(specOf("a", {}).limit).toEqual({ overflow: "allow" });
    expect(specOf("a", {}).options).toEqual({ temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1, repeatLastN: 64 });
  });

  test("a store model's layers go with the prompt; template variables and add_generation_prompt pass through", () => {
    const model = storeModel({ template: "{{ .Prompt }}", system: "Be brief.", messages: [{ role: "user", content: "seed" }] });
    const spec = specOf("c", { chat_template_kwargs: { enable_thinking: false }, add_generation_prompt: false }, model);
    expect(spec.prompt).toEqual({
      kind: "conversation", messages: hello, layers: model.stored!, addGenerationPrompt: false, templateVariables: { enable_thinking: false },
    });
  });

  test("options layer: the profile's defaults < the model's parameters < the request's fields", () => {
    const model = storeModel({ parameters: { temperature: 0.3, top_k: 7, stop: ["END"], num_ctx: 2048 } });
    expect(specOf("b", { temperature: 0.9, seed: 5 }, model).options).toEqual({
      temperature: 0.9, topP: 1, topK: 7, minP: 0, repeatPenalty: 1, stop: ["END"], contextLength: 2048, seed: 5,
    });
    // The request's stop strings replace the model's; an empty list leaves them.
    expect(specOf("b", { stop: "\n\n" }, model).options.stop).toEqual(["\n\n"]);
    expect(specOf("b", { stop: ["a", "b"] }, model).options.stop).toEqual(["a", "b"]);
    expect(specOf("b", { stop: [] }, model).options.stop).toEqual(["END"]);
  });

  test("synonyms: the profile's preferred spelling wins when a body sends both", () => {
    const body = { repeat_penalty: 1.2, repetition_penalty: 1.1 };
    expect(specOf("b", body).options.repeatPenalty).toBe(1.1);
    expect(specOf("a", body).options.repeatPenalty).toBe(1.2);
    expect(specOf("c", body).options.repeatPenalty).toBe(1.2);
    expect(specOf("b", { repeat_penalty: 1.3 }).options.repeatPenalty).toBe(1.3);
  });

  test("num_ctx and options.num_ctx set the context on profile a only", () => {
    expect(specOf("a", { num_ctx: 2048 }).options.contextLength).toBe(2048);
    expect(specOf("a", { options: { num_ctx: 1024 } }).options.contextLength).toBe(1024);
    expect(specOf("b", { num_ctx: 2048 }).options.contextLength).toBeUndefined();
    expect(refusal("a", { options: { num_ctx: 2 } }).param).toBe("options.num_ctx");
  });

  test("tools, tool_choice in both shapes, parallel_tool_calls and the structured-output constraint", () => {
    const tool = { type: "function" as const, function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
    expect(specOf("b", { tools: [tool], tool_choice: { type: "function", function: { name: "weather" } }, parallel_tool_calls: false }).output).toEqual({
      tools: [tool], parallelToolCalls: false, toolChoice: { name: "weather" },
    });
    expect(specOf("b", { tools: [tool], tool_choice: "required" }).output?.toolChoice).toBe("required");
    expect(specOf("b", { tools: [tool], tool_choice: { type: "function", name: "weather" } }).output?.toolChoice).toEqual({ name: "weather" });
    const schema = { type: "object", properties: { a: { type: "integer" } } };
    expect(specOf("b", { response_format: { type: "json_schema", json_schema: { name: "x", schema } } }).output).toEqual({
      tools: [], parallelToolCalls: true, constraint: { type: "json_schema", schema },
    });
    expect(specOf("b", { structured_outputs: { choice: ["yes", "no"] } }).output?.constraint).toEqual({ type: "choice", choices: ["yes", "no"] });
    expect(specOf("b", { response_format: { type: "text" } }).output?.constraint).toBeUndefined();
    expect(refusal("b", { response_format: { type: "json_object" }, grammar: "root ::= \"x\"" }).param).toBe("grammar");
    expect(() => specOf("b", { tool_choice: "sometimes" })).toThrow(/tool_choice must be/);
  });

  test("reply limit: max_completion_tokens over max_tokens, -1 unlimited only where the profile says", () => {
    expect(specOf("b", { max_tokens: 5 }).limit).toEqual({ maxTokens: 5, overflow: "refuse" });
    expect(specOf("a", { max_tokens: 5 }).limit).toEqual({ maxTokens: 5, overflow: "allow" });
    expect(specOf("b", { max_tokens: 5, max_completion_tokens: 9 }).limit).toEqual({ maxTokens: 9, overflow: "refuse" });
    expect(specOf("c", { max_tokens: -1 }).limit).toEqual({ maxTokens: "unlimited", overflow: "refuse" });
    expect(refusal("b", { max_tokens: -1 }).message).toBe('Invalid value for "max_tokens": must be at least 1');
    expect(refusal("c", { max_tokens: 0 }).param).toBe("max_tokens");
    // num_predict in a store model's parameters is an option, under the request's own limit field.
    expect(specOf("b", {}, storeModel({ parameters: { num_predict: 12 } })).options.maxTokens).toBe(12);
  });

  test("n and logprobs, and vLLM's checks on them", () => {
    expect(specOf("b", { n: 3 }).n).toBe(3);
    expect(specOf("b", { logprobs: true }).logprobs).toBe(0);
    expect(specOf("b", { logprobs: true, top_logprobs: 4 }).logprobs).toBe(4);
    expect(specOf("b", { logprobs: false, top_logprobs: 0 }).logprobs).toBeUndefined();
    expect(refusal("b", { top_logprobs: 2 }).param).toBe("top_logprobs");
    expect(refusal("b", { n: 2, temperature: 0 }).message).toBe("n must be 1 when using greedy sampling");
    expect(refusal("b", { stream_options: { include_usage: true } }).param).toBe("stream_options");
    expect(specOf("b", { n: 2, temperature: 0.5, stream: true, stream_options: { include_usage: true } }).n).toBe(2);
  });

  test("skip_special_tokens true also leaves tool-call markers out of the text", () => {
    expect(specOf("b", { skip_special_tokens: true }).keepSpecialTokens).toBe(false);
    expect(specOf("b", { skip_special_tokens: false }).keepSpecialTokens).toBeUndefined();
  });
});

describe("toChatMessages", () => {
  test("text parts join, image and audio parts go through the readers, assistant fields carry over", async () => {
    const images: string[] = [];
    const body = validate(chatCompletionSchema, {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", name: "ann", content: [{ type: "text", text: "What is" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA==" } }, { type: "text", text: "this?" }] },
        { role: "assistant", content: null, reasoning_content: "look", tool_calls: [{ id: "c1", type: "function", function: { name: "see", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "a cat" },
        { role: "user", content: [{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }] },
      ],
    });
    const messages = await toChatMessages(
      body.messages,
      async (url) => (images.push(url), new Uint8Array([1])),
      (clip) => new Uint8Array([clip.format === "wav" ? 2 : 3]),
    );
    expect(images).toEqual(["data:image/png;base64,AA=="]);
    expect(messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", name: "ann", content: "What is\nthis?", images: [new Uint8Array([1])] },
      { role: "assistant", content: null, reasoning_content: "look", tool_calls: [{ id: "c1", type: "function", function: { name: "see", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "a cat" },
      { role: "user", content: "", audio: [new Uint8Array([2])] },
    ]);
  });

  test("without readers, images and audio are refused naming the part", async () => {
    const body = validate(chatCompletionSchema, { messages: [{ role: "user", content: [{ type: "image_url", image_url: "https://example.com/x.png" }] }] });
    const refused = await toChatMessages(body.messages).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).param).toBe("messages[0].content[0].image_url");
  });
});

describe("chat.completion body", () => {
  const result = (fields: Partial<Parameters<typeof chatCompletionBody>[3][number]> = {}) => ({
    content: "Hi there", reasoning: "", toolCalls: [], finishReason: "stop" as const, usage: usage(), logprobs: [], ...fields,
  });

  test("one choice: vLLM's message shape, finish and stop reasons, usage", () => {
    const body = chatCompletionBody("chatcmpl-1", 1700000000, "tiny", [result({ reasoning: "think", stop: "\n\n" })], toUsage(7, [usage()]), false);
    expect(body).toEqual({
      id: "chatcmpl-1", object: "chat.completion", created: 1700000000, model: "tiny",
      choices: [{
        index: 0,
        message: { role: "assistant", content: "Hi there", refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning: "think" },
        logprobs: null, finish_reason: "stop", stop_reason: "\n\n",
      }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      system_fingerprint: null,
    });
  });

  test("tool calls carry their arguments as JSON text; whitespace around them is null content", () => {
    const call = { id: "chatcmpl-tool-abc", name: "weather", arguments: { city: "Paris" } };
    const body = chatCompletionBody("chatcmpl-1", 1, "tiny", [result({ content: "\n", toolCalls: [call], finishReason: "tool_calls", stopToken: 2 })], toUsage(7, [usage()]), false);
    expect(body.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant", content: null, refusal: null, annotations: null, audio: null, function_call: null,
        tool_calls: [{ id: "chatcmpl-tool-abc", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }], reasoning: null,
      },
      logprobs: null, finish_reason: "tool_calls", stop_reason: 2,
    });
  });

  test("n choices, logprobs with -inf as -9999, completion tokens summed and cached tokens the least of them", () => {
    const logprobs = [{ token: 5, text: "é", logprob: -0.5, top: [{ token: 5, text: "é", logprob: -0.5 }, { token: 6, text: "e", logprob: -Infinity }] }];
    const usages = [usage({ cachedPromptTokens: 4, completionTokens: 2 }), usage({ cachedPromptTokens: 6, completionTokens: 5 })];
    const body = chatCompletionBody("chatcmpl-1", 1, "tiny", [result({ logprobs }), result({ content: "Yo", finishReason: "length" })], toUsage(7, usages), true);
    expect(body.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([[0, "Hi there", "stop"], [1, "Yo", "length"]]);
    expect(body.choices[0]!.logprobs).toEqual({
      content: [{ token: "é", logprob: -0.5, bytes: [195, 169], top_logprobs: [{ token: "é", logprob: -0.5, bytes: [195, 169] }, { token: "e", logprob: -9999, bytes: [101] }] }],
    });
    expect(body.choices[1]!.logprobs).toEqual({ content: [] });
    expect(body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 7, total_tokens: 14, prompt_tokens_details: { cached_tokens: 4 } });
  });
});

describe("chat.completion.chunk stream", () => {
  const keepAlives: string[] = [];
  const ctx = (profile: ProfileName, withLogprobs = false, returnProgress = false) => ({
    id: "chatcmpl-1", created: 1, model: "tiny", profile: profiles[profile], withLogprobs, returnProgress, keepAlive: async () => void keepAlives.push("keep-alive"),
  });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) =>
    ({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "tiny", choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason, ...extra }] });

  test("role, reasoning, content and tool-call deltas, then the finish chunk; empty text sends nothing", async () => {
    const { sent, send } = collector<unknown>();
    const usages = await streamChatChoices([choiceOf([
      reasoning("hmm"), content(""), content("Let me look."),
      ...toolCallEvents(0, "chatcmpl-tool-1", "weather", { city: "Oslo" }),
      done("tool_calls", { stopToken: 2, usage: usage({ completionTokens: 9 }) }),
    ])], ctx("b"), send);
    expect(usages).toEqual([usage({ completionTokens: 9 })]);
    expect(sent).toEqual([
      chunk({ role: "assistant", content: "" }),
      chunk({ reasoning: "hmm" }),
      chunk({ content: "Let me look." }),
      chunk({ tool_calls: [{ index: 0, id: "chatcmpl-tool-1", type: "function", function: { arguments: "", name: "weather" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({}, "tool_calls", { stop_reason: 2 }),
    ]);
  });

  test("prompt progress: llama-server's prompt_progress chunks with return_progress, else keep-alives", async () => {
    const progress = (processed: number) => ({ type: "prompt_progress" as const, processed, total: 1024, cached: 256, ms: 12.4 });
    const events = [progress(768), progress(1024), content("Hi"), done("stop")];
    const withChunks = collector<unknown>();
    keepAlives.length = 0;
    await streamChatChoices([choiceOf(events)], ctx("b", false, true), withChunks.send);
    expect(withChunks.sent.slice(1, 3)).toEqual([768, 1024].map((processed) => ({
      id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "tiny", choices: [],
      prompt_progress: { total: 1024, cache: 256, processed, time_ms: 12 },
    })));
    expect(keepAlives).toEqual([]);
    const withComments = collector<unknown>();
    await streamChatChoices([choiceOf(events)], ctx("b"), withComments.send);
    expect(keepAlives).toEqual(["keep-alive", "keep-alive"]);
    expect(withComments.sent).toEqual([chunk({ role: "assistant", content: "" }), chunk({ content: "Hi" }), chunk({}, "stop", { stop_reason: null })]);
  });

  test("logprobs ride on content chunks, and the rest on the finish chunk", async () => {
    const lp = (text: string) => ({ token: 1, text, logprob: -1, top: [] });
    const { sent, send } = collector<unknown>();
    await streamChatChoices([choiceOf([
      { type: "content", text: "ab", logprobs: [lp("a"), lp("b")] },
      done("cancelled", { logprobs: [lp("<end>")] }),
    ])], ctx("c", true), send);
    expect(sent.slice(1)).toEqual([
      chunk({ content: "ab" }, null, { logprobs: { content: [{ token: "a", logprob: -1, bytes: [97], top_logprobs: [] }, { token: "b", logprob: -1, bytes: [98], top_logprobs: [] }] } }),
      chunk({}, "abort", { stop_reason: null, logprobs: { content: [{ token: "<end>", logprob: -1, bytes: [60, 101, 110, 100, 62], top_logprobs: [] }] } }),
    ]);
  });

  test("an engine error ends the stream with an error chunk in the profile's shape, and no usage", async () => {
    for (const [profile, body] of [
      ["b", { error: { message: "queue full", type: "ServiceUnavailableError", param: null, code: 503 } }],
      ["a", { error: { message: "queue full", type: "api_error", param: null, code: null } }],
    ] as const) {
      const { sent, send } = collector<unknown>();
      const usages = await streamChatChoices([choiceOf([content("Hi"), { type: "error", code: "busy", message: "queue full" }])], ctx(profile), send);
      expect(usages).toBeUndefined();
      expect(sent.at(-1)).toEqual(body);
    }
  });

  test("n choices: every role chunk first, then each choice's chunks under its index", async () => {
    const { sent, send } = collector<unknown>();
    const usages = await streamChatChoices([
      choiceOf([content("one"), done("stop")]),
      choiceOf([content("two"), done("length", { usage: usage({ completionTokens: 8 }) })]),
    ], ctx("b"), send);
    expect(usages?.map((u) => u.completionTokens)).toEqual([3, 8]);
    const choices = sent.map((c) => (c as { choices: Array<{ index: number; delta: unknown; finish_reason: string | null }> }).choices[0]!);
    expect(choices.slice(0, 2).map((c) => [c.index, c.delta])).toEqual([[0, { role: "assistant", content: "" }], [1, { role: "assistant", content: "" }]]);
    const of = (index: number) => choices.slice(2).filter((c) => c.index === index).map((c) => [c.delta, c.finish_reason]);
    expect(of(0)).toEqual([[{ content: "one" }, null], [{}, "stop"]]);
    expect(of(1)).toEqual([[{ content: "two" }, null], [{}, "length"]]);
  });
});
