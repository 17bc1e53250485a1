// The spec's four-step tool-call flow, shared by the in-process and the remote tests: register, generate
// with a forced call, validate and answer it with a tool message, continue from the new history.
import { expect } from "bun:test";
import {
  ChatMessage, Complete, Conversation, FunctionCalls, GenerationError, LeapFunction, LeapInt, LeapStr, validateFunctionCall,
  type GenerationOptionsInit, type MessageResponse,
} from "llamux";

export const weatherFunction = new LeapFunction({
  name: "get_weather",
  description: "Current weather in a city",
  parameters: [
    // Closed sets and integers: a forced string of free text may never end on random weights.
    { name: "city", type: new LeapStr({ enumValues: ["Paris", "Oslo"], description: "ignored: the parameter's description wins" }), description: "City name" },
    { name: "unit", type: new LeapStr({ enumValues: ["celsius", "fahrenheit"] }), description: "Temperature unit" },
    { name: "days", type: new LeapInt(), description: "Days ahead", optional: true },
  ],
});

export async function collect(responses: AsyncIterable<MessageResponse>): Promise<MessageResponse[]> {
  const all: MessageResponse[] = [];
  for await (const response of responses) all.push(response);
  return all;
}

/** The prompt tokens of a reply that ended in Complete (anything else is the test's failure). */
export function promptTokens(responses: MessageResponse[]): number {
  const last = responses.at(-1);
  if (!(last instanceof Complete)) throw new Error(`expected Complete, got ${JSON.stringify(last)}`);
  return last.stats.promptTokens;
}

/** A function whose calls are short, for the slower formats (every forced character costs a step on random weights). */
export const zoneFunction = new LeapFunction({
  name: "get_time",
  description: "Current time in a zone",
  parameters: [{ name: "zone", type: new LeapStr({ enumValues: ["utc", "cet"] }), description: "Time zone" }],
});

export interface ConversationFactory {
  create(systemPrompt: string): Conversation;
  fromHistory(history: ChatMessage[]): Conversation;
}

/**
 * Steps 1 to 4 with a forced call; returns the responses of step 1 for format-specific checks.
 * `serverParses`: the calls are read by a server, so a null functionCallParser still gives FunctionCalls.
 */
export async function runToolFlow(runner: ConversationFactory, options: GenerationOptionsInit, fn: LeapFunction = weatherFunction, serverParses = false): Promise<MessageResponse[]> {
  // 1. Register, then generate with the user's message.
  const conversation = runner.create("You can look up the weather.");
  conversation.registerFunction(fn);
  // The longest call of weatherFunction the grammar admits is 136 characters (Hermes, days at 15 digits; LFM2's 108), +1 end token.
  const first = await collect(conversation.generateResponse(ChatMessage.text("user", "Weather in Paris?"), { parallelToolCalls: false, ...options, toolChoice: "required", maxTokens: 144, seed: 5 }));
  const complete = first.at(-1);
  expect(complete).toBeInstanceOf(Complete);
  const calls = first.filter((r): r is FunctionCalls => r instanceof FunctionCalls);
  if (options.functionCallParser === null && !serverParses) {
    expect(calls).toEqual([]);
    expect((complete as Complete).fullMessage.functionCalls).toBeUndefined();
    return first;
  }
  expect(calls).toHaveLength(1);
  const call = calls[0]!.functionCalls[0]!;
  expect(call.name).toBe(fn.name);
  expect((complete as Complete).fullMessage.functionCalls).toEqual(calls[0]!.functionCalls);
  expect((complete as Complete).finishReason).toBe("tool_calls");
  // 2. Validate the arguments: the grammar made the model write every required one with the right type.
  expect(validateFunctionCall(fn, call)).toEqual([]);
  expect(conversation.history.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  // 3. The tool's result as a tool message; 4. a new conversation from the history plus it.
  const toolMessage = ChatMessage.text(ChatMessage.Role.TOOL, JSON.stringify({ ...call.arguments, result: 21 }));
  const next = runner.fromHistory([...conversation.history, toolMessage]);
  const reply = await collect(next.generateResponse(undefined, { maxTokens: 4, seed: 1 }));
  expect(reply.some((r) => r instanceof GenerationError)).toBe(false);
  const final = reply.at(-1) as Complete;
  expect(final).toBeInstanceOf(Complete);
  expect(final.fullMessage.role).toBe("assistant");
  expect(final.stats.completionTokens).toBeGreaterThan(0);
  expect(next.history.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
  return first;
}
