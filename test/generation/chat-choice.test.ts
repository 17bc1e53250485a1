// ChatChoice turns a choice's engine events into chat events through its output parser. The engine
// side is a scripted event sequence here; the routes' end-to-end tests run the real engine.
import { describe, expect, test } from "bun:test";
import type { EngineEvent, RequestUsage } from "../../src/engine/types.ts";
import { ChatChoice } from "../../src/generation/chat.ts";
import { PlainTextOutput, type ChatOutput, type OutputParser } from "../../src/chat/output-parser.ts";
import type { ChatEvent } from "../../src/generation/chat-events.ts";
import { ChoiceStream } from "../../src/generation/choices.ts";

const usage: RequestUsage = { promptTokens: 3, cachedPromptTokens: 0, completionTokens: 2, timeToFirstTokenMs: 1, promptMs: 1, decodeMs: 1, queueMs: 0 };

function choiceOf(events: EngineEvent[], parser: OutputParser): ChatChoice {
  const [first, ...rest] = events;
  async function* remaining() {
    yield* rest;
  }
  return new ChatChoice(new ChoiceStream(remaining(), first!), parser);
}

const token = (text: string, logprob = -1): EngineEvent => ({ type: "token", id: "r", token: 1, text, logprobs: { token: 1, text, logprob, top: [] } });
const done: EngineEvent = { type: "done", id: "r", finishReason: "stop", usage };

/** Reads "CALL" as a complete tool call and everything else as text. */
class CallWordParser implements OutputParser {
  push(text: string): ChatOutput[] {
    if (text !== "CALL") return [{ type: "content", text }];
    return [
      { type: "tool_call_delta", index: 0, id: "call-1", name: "f", arguments: "{}" },
      { type: "tool_call", index: 0, call: { id: "call-1", name: "f", arguments: {} } },
    ];
  }
  finish(): ChatOutput[] {
    return [];
  }
}

describe("ChatChoice", () => {
  test("plain text collects content, logprobs and the engine's finish", async () => {
    const result = await choiceOf([token("Hel", -0.5), token("lo", -0.25), done], new PlainTextOutput()).collect();
    expect(result.content).toBe("Hello");
    expect(result.logprobs.map((l) => l.logprob)).toEqual([-0.5, -0.25]);
    expect(result.finishReason).toBe("stop");
    expect(result.toolCalls).toEqual([]);
  });

  test("a tool call makes a stopped choice finish with tool_calls", async () => {
    const result = await choiceOf([token("a"), token("CALL"), done], new CallWordParser()).collect();
    expect(result.toolCalls).toEqual([{ id: "call-1", name: "f", arguments: {} }]);
    expect(result.content).toBe("a");
    expect(result.finishReason).toBe("tool_calls");
  });

  test("logprobs of tokens that made no text travel with the next content", async () => {
    const events: ChatEvent[] = [];
    for await (const event of choiceOf([token("x", -1), token("CALL", -2), token("y", -3), done], new CallWordParser()).events()) events.push(event);
    const contents = events.filter((e) => e.type === "content");
    expect(contents.map((e) => e.logprobs.map((l) => l.logprob))).toEqual([[-1], [-2, -3]]);
    expect(events.at(-1)?.type).toBe("done");
  });

  test("a reply that is only calls still reports the logprobs of every token, on its done event", async () => {
    const result = await choiceOf([token("CALL", -2), token("", -4), done], new CallWordParser()).collect();
    expect(result.toolCalls).toHaveLength(1);
    expect(result.logprobs.map((l) => l.logprob)).toEqual([-2, -4]);
    const events: ChatEvent[] = [];
    for await (const event of choiceOf([token("CALL", -2), done], new CallWordParser()).events()) events.push(event);
    const last = events.at(-1);
    expect(last?.type === "done" ? last.logprobs?.map((l) => l.logprob) : undefined).toEqual([-2]);
  });

  test("an engine error ends the events and is thrown by collect", async () => {
    const failing: EngineEvent[] = [token("a"), { type: "error", id: "r", code: "engine_exited", message: "gone" }];
    const events: ChatEvent[] = [];
    for await (const event of choiceOf(failing, new PlainTextOutput()).events()) events.push(event);
    expect(events.at(-1)).toEqual({ type: "error", code: "engine_exited", message: "gone" });
    await expect(choiceOf(failing, new PlainTextOutput()).collect()).rejects.toThrow("gone");
  });
});
