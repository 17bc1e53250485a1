// withReasoningBudget over a scripted engine handle: the reasoning is cut at the budget, the
// continuation's prompt is the prompt plus the reply so far plus the close tag, and the caller sees one
// stream with one usage.
import { expect, test } from "bun:test";
import type { EngineEvent, GenerateRequest, ModelInfo } from "../../src/engine/types.ts";
import type { EngineHandle } from "../../src/engine/engine-handle.ts";
import { withReasoningBudget } from "../../src/generation/reasoning-budget.ts";

const usage = (promptTokens: number, completionTokens: number) =>
  ({ promptTokens, cachedPromptTokens: promptTokens > 10 ? 10 : 0, completionTokens, timeToFirstTokenMs: 1, promptMs: 1, decodeMs: 1, queueMs: 0 });

/** Each generate() call streams the next script's words as tokens 100, 101, …; the requests are recorded. */
function scriptedEngine(scripts: string[][]): { engine: EngineHandle; requests: Array<Omit<GenerateRequest, "id">> } {
  const requests: Array<Omit<GenerateRequest, "id">> = [];
  const engine: EngineHandle = {
    info: {} as ModelInfo,
    tokenize: async (text) => [...text].map((_, i) => 900 + i).slice(0, 2),
    detokenize: async (tokens) => tokens.map(String).join(" "),
    countPromptTokens: async () => 2,
    async *generate(request): AsyncGenerator<EngineEvent> {
      requests.push(request);
      const words = scripts[requests.length - 1] ?? [];
      for (const [i, text] of words.entries()) yield { type: "token", id: "", token: 100 + i, text };
      yield { type: "done", id: "", finishReason: "length", usage: usage((request.prompt as number[]).length, words.length) };
    },
    speak: () => {
      throw new Error("not used here");
    },
  };
  return { engine, requests };
}

async function collect(events: AsyncGenerator<EngineEvent>): Promise<EngineEvent[]> {
  const out: EngineEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

test("reasoning that outlasts the budget is closed and the answer continues", async () => {
  const { engine, requests } = scriptedEngine([["a", "b", "c", "d", "e", "f"], ["x", "y"]]);
  const budgeted = withReasoningBudget(engine, 3, "<|im_start|>assistant\n<think>\n");
  const events = await collect(budgeted.generate({ prompt: [1, 2], maxTokens: 10 }));
  const text = events.flatMap((e) => (e.type === "token" ? [e.text] : [])).join("");
  expect(text).toBe("abc</think>\n\nxy");
  expect(requests[1]!.prompt).toEqual([1, 2, 100, 101, 102, 900, 901]);
  expect(requests[1]!.maxTokens).toBe(5);
  const done = events.at(-1)!;
  if (done.type !== "done") throw new Error("expected done");
  expect(done.usage.promptTokens).toBe(2);
  expect(done.usage.completionTokens).toBe(7);
});

test("reasoning closed within the budget, or no reasoning at all, passes through untouched", async () => {
  const closed = scriptedEngine([["<think>", "a", "</think>", "b", "c", "d"]]);
  const events = await collect(withReasoningBudget(closed.engine, 3, "assistant\n").generate({ prompt: [1], maxTokens: 10 }));
  expect(closed.requests).toHaveLength(1);
  expect(events.filter((e) => e.type === "token")).toHaveLength(6);
  const plain = scriptedEngine([["a", "b", "c", "d", "e"]]);
  await collect(withReasoningBudget(plain.engine, 2, "assistant\n").generate({ prompt: [1], maxTokens: 10 }));
  expect(plain.requests).toHaveLength(1);
});

test("a budget that uses up max_tokens ends the reply there", async () => {
  const { engine, requests } = scriptedEngine([["a", "b", "c"]]);
  const events = await collect(withReasoningBudget(engine, 3, "<think>").generate({ prompt: [1], maxTokens: 4 }));
  expect(requests).toHaveLength(1);
  const done = events.at(-1)!;
  expect(done.type === "done" && done.finishReason).toBe("length");
});
