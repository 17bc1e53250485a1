// Agents with hundreds of tools can force a call: 300 tools with tool_choice "required" on
// /v1/chat/completions (the pinned `openai` client, a real `llamux serve`, random-weight models) give a
// valid call to one of them, in the ChatML/Hermes syntax and in LFM2's pythonic one. The call grammar
// writes the tool names as a prefix tree, so it stays within the grammar bounds (a flat alternation of
// 300 names is refused past 128). Free strings are bounded by enums, so random weights end their calls.
// The servers' chat template leaves the tool list out of the prompt: 300 tools render to about 25,000
// tokens, past the tiny models' 4,096 of context; the grammar, which this is about, still holds all 300.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Ajv2020 from "ajv/dist/2020.js";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

const VERBS = ["get", "set", "list", "find", "make", "drop", "open", "sync", "move", "tag"];
const NOUNS = ["file", "user", "issue", "alarm", "note", "page", "city", "task", "mail", "song"];
/** 300 names that share prefixes the way real tool lists do (get_file_0, get_file_1, …). */
const names = Array.from({ length: 300 }, (_, i) => `${VERBS[i % 10]}_${NOUNS[Math.floor(i / 10) % 10]}_${Math.floor(i / 100)}`);
const parametersOf = (i: number) => ({
  type: "object",
  properties: { mode: { enum: ["a", "b", `m${i}`] }, level: { type: "integer", minimum: 0, maximum: 9 } },
  required: ["mode"],
  additionalProperties: false,
});
const tools = names.map((name, i) => ({ type: "function" as const, function: { name, parameters: parametersOf(i) } }));
const ajv = new Ajv2020({ strict: false });
const validators = new Map(names.map((name, i) => [name, ajv.compile(parametersOf(i))]));

const TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
const SYNTAXES = [["hermes", "tiny-llama"], ["pythonic", "tiny-llama"], ["lfm2", "tiny-lfm2"]] as const;
const servers = new Map<string, RunningServer>();

beforeAll(async () => {
  await Promise.all(SYNTAXES.map(async ([syntax, modelName]) => {
    const args = [await ensureModel(modelName), "--profile", "b", "--served-model-name", "tiny", "--chat-template", TEMPLATE, "--tool-call-parser", syntax];
    servers.set(syntax, await startServer([...args, "--ctx-size", "1024", "--parallel", "1", "--threads", "1"]));
  }));
}, 120_000);
afterAll(() => Promise.all([...servers.values()].map((server) => server.stop())));

describe.each(SYNTAXES)("%s calls (%s)", (syntax, _model) => {
  test("300 tools with tool_choice required: each of 4 seeds gives a valid call to one of them", async () => {
    const openai = new OpenAI({ baseURL: `${servers.get(syntax)!.baseUrl}/v1`, apiKey: "placeholder", maxRetries: 0, timeout: 600_000 });
    for (const seed of [1, 2, 3, 4]) {
      const completion = await openai.chat.completions.create({
        model: "tiny", messages: [{ role: "user", content: "Do something" }], tools, tool_choice: "required", parallel_tool_calls: false, seed, max_tokens: 200,
      });
      const calls = completion.choices[0]!.message.tool_calls ?? [];
      expect(calls).toHaveLength(1);
      const call = calls[0]!;
      if (call.type !== "function") throw new Error(`expected a function call, got ${JSON.stringify(call)}`);
      const validate = validators.get(call.function.name);
      if (!validate) throw new Error(`call to an undeclared tool ${JSON.stringify(call.function.name)}`);
      const args: unknown = JSON.parse(call.function.arguments);
      if (!validate(args)) throw new Error(`arguments ${call.function.arguments} of ${call.function.name}: ${ajv.errorsText(validate.errors)}`);
    }
  }, 600_000);
});
