// toolCallGrammar on real libllama: in each call syntax, a random-weight model constrained by the grammar
// writes calls that the streaming reader of that syntax parses, to the chosen tools only, with arguments
// that validate against the tools' schemas.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import { Engine } from "../../src/engine/engine.ts";
import { StructuredOutputError, toolCallGrammar } from "../../src/chat/structured/index.ts";
import { TOOL_CALL_FORMATS, TOOL_CALL_SYNTAXES } from "../../src/chat/tool-calls/formats.ts";
import { ToolCallOutput } from "../../src/chat/tool-calls/tool-call-output.ts";
import type { ParsedToolCall } from "../../src/chat/output-parser.ts";
import type { ToolDefinition } from "../../src/chat/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { generateWithGrammar } from "../fixtures/engine-run.ts";

let engine: Engine;
const ajv = new Ajv2020({ strict: false });

const tools: ToolDefinition[] = [
  { type: "function", function: { name: "set_alarm", parameters: { type: "object", properties: { hour: { type: "integer", minimum: 0, maximum: 23 }, label: { type: ["string", "null"], maxLength: 4 }, loud: { type: "boolean" } }, required: ["hour"], additionalProperties: false } } },
  { type: "function", function: { name: "stop" } },
];
const validators = Object.fromEntries(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters ?? { type: "object", maxProperties: 0 })]));

// The longest reply the grammars here admit is 401 characters (three Hermes set_alarm calls, labels of four \uXXXX escapes), +1 end token.
const generate = async (grammar: string, seed: number) => (await generateWithGrammar(engine, "Call a tool:", grammar, seed, 416)).text;

beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), parallel: 4, contextPerSequence: 768, threads: 2 });
});
afterAll(() => engine.dispose());

describe.each(TOOL_CALL_SYNTAXES)("%s", (syntax) => {
  test("required: the reader finds only valid calls and no text", async () => {
    const grammar = toolCallGrammar({ tools, syntax, choice: "required", maxCalls: 3 });
    for (const text of await Promise.all([1, 2, 3].map((seed) => generate(grammar, seed)))) {
      const reader = new ToolCallOutput(TOOL_CALL_FORMATS[syntax]);
      const outputs = [...reader.push(text), ...reader.finish()];
      expect(outputs.filter((o) => o.type === "content")).toEqual([]);
      const calls = outputs.flatMap((o) => (o.type === "tool_call" ? [o.call as ParsedToolCall] : []));
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls.length).toBeLessThanOrEqual(3);
      for (const call of calls) {
        const validate = validators[call.name];
        if (!validate?.(call.arguments)) throw new Error(`${text}: ${call.name} ${JSON.stringify(call.arguments)}`);
      }
    }
  }, 300_000);

  test("a named tool without parallel calls: exactly one call to it", async () => {
    const grammar = toolCallGrammar({ tools, syntax, choice: { name: "set_alarm" } });
    const text = await generate(grammar, 9);
    const reader = new ToolCallOutput(TOOL_CALL_FORMATS[syntax]);
    const calls = [...reader.push(text), ...reader.finish()].filter((o) => o.type === "tool_call");
    expect(calls).toHaveLength(1);
  }, 300_000);
});

test("a named tool that is not declared is the client's error", () => {
  expect(() => toolCallGrammar({ tools, syntax: "hermes", choice: { name: "missing" } })).toThrow(StructuredOutputError);
});
