// ReasoningOutput splits <think> reasoning from the answer, however the text is split into pushes, and
// composes with the tool-call reader (calls are read in the answer only).
import { describe, expect, test } from "bun:test";
import { ReasoningOutput, promptOpensReasoning } from "../../src/chat/reasoning.ts";
import { TOOL_CALL_FORMATS } from "../../src/chat/tool-calls/formats.ts";
import { ToolCallOutput } from "../../src/chat/tool-calls/tool-call-output.ts";
import { ChainedOutput, type ChatOutput, type OutputParser } from "../../src/chat/output-parser.ts";

interface Case { name: string; text: string; startsInside?: boolean; reasoning: string; content: string }

const cases: Case[] = [
  { name: "reasoning then answer", text: "<think>I should add.</think>The answer is 4.", reasoning: "I should add.", content: "The answer is 4." },
  { name: "whitespace inside and after the tags", text: "\n<think>\nStep 1\nStep 2\n</think>\n\nAnswer\n", reasoning: "Step 1\nStep 2", content: "Answer\n" },
  { name: "no reasoning", text: "  Just an answer", reasoning: "", content: "  Just an answer" },
  { name: "tags later in the text are text", text: "Answer <think>x</think>", reasoning: "", content: "Answer <think>x</think>" },
  { name: "a longer tag is not the tag", text: "<thinking>x</thinking>", reasoning: "", content: "<thinking>x</thinking>" },
  { name: "the prompt opened reasoning", text: "reasoning here\n</think>\nanswer", startsInside: true, reasoning: "reasoning here", content: "answer" },
  { name: "reasoning never closed", text: "<think>still thinking ", reasoning: "still thinking", content: "" },
  { name: "a second close tag is answer text", text: "<think>a</think>b</think>", reasoning: "a", content: "b</think>" },
  { name: "empty reasoning", text: "<think></think>", reasoning: "", content: "" },
  { name: "a partial tag at the end", text: "<think>x</thi", reasoning: "x</thi", content: "" },
];

function run(parser: OutputParser, pieces: string[]): ChatOutput[] {
  return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.finish()];
}

const joined = (events: ChatOutput[], type: "reasoning" | "content") =>
  events.flatMap((e) => (e.type === type ? [e.text] : [])).join("");

describe("ReasoningOutput", () => {
  for (const c of cases) {
    test(c.name, () => {
      const splits = [[c.text], [...c.text], ...Array.from({ length: c.text.length + 1 }, (_, at) => [c.text.slice(0, at), c.text.slice(at)])];
      for (const pieces of splits) {
        const events = run(new ReasoningOutput({ startsInside: c.startsInside ?? false }), pieces);
        expect(joined(events, "reasoning")).toBe(c.reasoning);
        expect(joined(events, "content")).toBe(c.content);
        expect(events.some((e) => "text" in e && e.text === "")).toBe(false);
      }
    });
  }

  test("reasoning streams as it comes, holding only a possible close tag", () => {
    const parser = new ReasoningOutput();
    expect(parser.push("<think>Let me")).toEqual([{ type: "reasoning", text: "Let me" }]);
    expect(parser.push(" see </th")).toEqual([{ type: "reasoning", text: " see" }]);
    expect(parser.push("ink>Yes")).toEqual([{ type: "content", text: "Yes" }]);
  });

  test("a prompt that ends inside <think> is detected", () => {
    expect(promptOpensReasoning("<|im_start|>assistant\n<think>\n")).toBe(true);
    expect(promptOpensReasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(false);
    expect(promptOpensReasoning("<|im_start|>assistant\n")).toBe(false);
  });
});

describe("reasoning before tool calls", () => {
  const text = "<think>Maybe <|tool_call_start|>[g()]<|tool_call_end|>?</think>Calling.<|tool_call_start|>[f(a=1)]<|tool_call_end|>";

  test("calls are read in the answer, not in the reasoning", () => {
    for (let at = 0; at <= text.length; at++) {
      const parser = new ChainedOutput(new ReasoningOutput(), new ToolCallOutput(TOOL_CALL_FORMATS.lfm2));
      const events = run(parser, [text.slice(0, at), text.slice(at)]);
      expect(joined(events, "reasoning")).toBe("Maybe <|tool_call_start|>[g()]<|tool_call_end|>?");
      expect(joined(events, "content")).toBe("Calling.");
      expect(events.flatMap((e) => (e.type === "tool_call" ? [e.call.name] : []))).toEqual(["f"]);
    }
  });
});
