// The chat templates published LFM2 GGUFs carry, verbatim: the original LFM2 one (tool list tokens, no
// <|tool_call_start|> in it) and LFM2.5's ("List of tools: [" without list tokens). Their call syntax is
// found as llama.cpp finds it, so forced calls are pythonic between <|tool_call_start|> and
// <|tool_call_end|>, and earlier calls in the history reach the model in that syntax.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { renderChatPrompt } from "../../src/generation/chat.ts";
import { planChatOutput } from "../../src/generation/chat-output.ts";
import { toolCallSyntaxOfTemplate } from "../../src/chat/tool-calls/template-syntax.ts";
import type { EngineHandle } from "../../src/engine/engine-handle.ts";
import type { ChatMessage, ToolDefinition } from "../../src/chat/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { CHATML_HERMES_TEMPLATE, LFM2_ORIGINAL_TEMPLATE, LFM25_8B_TEMPLATE, LFM25_INSTRUCT_TEMPLATE } from "../../scripts/models/templates.ts";

const TEMPLATES = [
  ["LFM2 original", LFM2_ORIGINAL_TEMPLATE],
  ["LFM2.5 Instruct", LFM25_INSTRUCT_TEMPLATE],
  ["LFM2.5-8B-A1B", LFM25_8B_TEMPLATE],
] as const;

const tools: ToolDefinition[] = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];

let engine: Engine;
beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), parallel: 1, contextPerSequence: 512, threads: 1 });
});
afterAll(() => engine.dispose());

function handleOf(chatTemplate: string): EngineHandle {
  return {
    info: { ...engine.info, chatTemplate },
    tokenize: async (text, options = {}) => engine.tokenize(text, options.addSpecial ?? true, options.parseSpecial ?? true),
    detokenize: async (tokens) => engine.detokenize(tokens),
    countPromptTokens: async (prompt) => engine.countPromptTokens(prompt),
    generate: () => {
      throw new Error("not used here");
    },
    speak: () => {
      throw new Error("not used here");
    },
  };
}

describe.each(TEMPLATES)("%s template", (_, template) => {
  test("reads and forces LFM2's syntax, as llama.cpp picks it", async () => {
    expect(template.includes("<tool_call>")).toBe(false);
    expect(toolCallSyntaxOfTemplate(template)).toBe("lfm2");
    for (const toolChoice of ["required", { name: "get_weather" }] as const) {
      const plan = await planChatOutput({ tools, toolChoice }, template);
      expect(plan.syntax).toBe("lfm2");
      expect(plan.grammar).toStartWith('root ::= "<|tool_call_start|>" "[" ');
    }
  });

  test("an earlier call in the history reaches the model as <|tool_call_start|>[get_weather(...)]", async () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }] },
      { role: "tool", content: "21 degrees", tool_call_id: "call_1" },
    ];
    const prompt = await renderChatPrompt(handleOf(template), { messages, tools });
    expect(prompt.text).toMatch(/<\|tool_call_start\|>\[get_weather\(city=("Paris"|'Paris')\)\]<\|tool_call_end\|>/);
    expect(prompt.text).not.toContain("<tool_call>");
    expect(prompt.text).not.toContain("null");
    expect(prompt.text.endsWith("<|im_start|>assistant\n")).toBe(true);
  });
});

test("templates that show Hermes calls keep Hermes; LFM2 markers in the list name LFM2", () => {
  expect(toolCallSyntaxOfTemplate(CHATML_HERMES_TEMPLATE)).toBe("hermes");
  expect(toolCallSyntaxOfTemplate("{{ 'List of tools: <|tool_list_start|>[' }}{{ ']<|tool_list_end|>' }}")).toBe("lfm2");
  expect(toolCallSyntaxOfTemplate("{{ 'List of tools: [' }}")).toBe("lfm2");
  expect(toolCallSyntaxOfTemplate("{{ messages }}")).toBeUndefined();
});
