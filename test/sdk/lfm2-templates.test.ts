// The SDK with LFM2 models carrying the templates published GGUFs have (the original LFM2 one, which never
// shows <|tool_call_start|>, and LFM2.5's): forced calls follow the model's own syntax whatever parser reads
// them, and DefaultFunctionCallParser reads them through the whole tool-call flow.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AlternateFunctionCallParser, Chunk, ChatMessage, Complete, DefaultFunctionCallParser, FunctionCalls, ModelRunner } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { collect, runToolFlow, zoneFunction, type ConversationFactory } from "./tool-flow.ts";

const runners: Record<string, ModelRunner> = {};
const factory = (name: string): ConversationFactory => ({
  create: (systemPrompt) => runners[name]!.createConversation(systemPrompt),
  fromHistory: (history) => runners[name]!.createConversationFromHistory(history),
});

beforeAll(async () => {
  for (const name of ["tiny-lfm2-original", "tiny-lfm25"] as const) runners[name] = await ModelRunner.load(await ensureModel(name), { contextSize: 512, parallel: 1 });
}, 120_000);
afterAll(async () => {
  for (const runner of Object.values(runners)) await runner.unload();
});

describe.each(["tiny-lfm2-original", "tiny-lfm25"])("%s", (name) => {
  test("DefaultFunctionCallParser reads the forced calls through the four-step flow", async () => {
    const first = await runToolFlow(factory(name), { functionCallParser: new DefaultFunctionCallParser() }, zoneFunction);
    expect(first.filter((r) => r instanceof Chunk)).toEqual([]);
  }, 240_000);

  test("the forced grammar is LFM2's pythonic syntax whichever parser reads", async () => {
    // The longest call the grammar admits is 59 characters (`<|tool_call_start|>[get_time(zone="utc" )]<|tool_call_end|>`), +1 end token.
    const conversation = runners[name]!.createConversation("Tell the time.");
    conversation.registerFunction(zoneFunction);
    const raw = await collect(conversation.generateResponse(ChatMessage.text("user", "Time?"), { functionCallParser: null, toolChoice: "required", parallelToolCalls: false, maxTokens: 64, seed: 2 }));
    const text = raw.filter((r) => r instanceof Chunk).map((r) => (r as Chunk).text).join("");
    expect(text).toMatch(/^<\|tool_call_start\|>\[get_time\(zone="(utc|cet)"\s*\)\]<\|tool_call_end\|>$/);
    const hermes = runners[name]!.createConversation("Tell the time.");
    hermes.registerFunction(zoneFunction);
    const read = await collect(hermes.generateResponse(ChatMessage.text("user", "Time?"), { functionCallParser: new AlternateFunctionCallParser(), toolChoice: "required", parallelToolCalls: false, maxTokens: 64, seed: 2 }));
    expect(read.filter((r) => r instanceof FunctionCalls)).toEqual([]);
    expect((read.at(-1) as Complete).fullMessage.text).toBe(text);
  }, 240_000);
});
