// Tool calling, structured output and reasoning through a real `llamux serve` with the official `openai`
// and `ollama` clients. Random weights never call tools on their own, so tool_choice "required" and a
// named tool must make every reply a valid call: checked on the tiny LFM2 model (pythonic calls between special
// tokens) over 20 seeds (n = 20 choices; 8 requests on /api/chat) and on the tiny ChatML/Hermes model over 8
// (n = 8; 2 requests on /api/chat, seed 0 among them: its reply holds 8 calls). The Hermes model has Qwen2's
// vocabulary (about 151,000 tokens) and random weights whose sampled token the grammar nearly always rejects,
// so each of its tokens takes a pass of the grammar over the whole vocabulary (about 45 ms on 2 cores against
// 2.4 ms unconstrained): 20 draws there took two minutes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Ollama } from "ollama";
import Ajv2020 from "ajv/dist/2020.js";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

let server: RunningServer;
let openai: OpenAI;
let ollama: Ollama;
let lfm2Path: string;
const ajv = new Ajv2020({ strict: false });

const weather = {
  type: "object",
  properties: { city: { enum: ["Paris", "Oslo"] }, days: { type: "integer", minimum: 1, maximum: 7 }, metric: { type: "boolean" } },
  required: ["city", "days"],
  additionalProperties: false,
};
const search = { type: "object", properties: { query: { type: "string", maxLength: 5 } }, required: ["query"], additionalProperties: false };
const tools = [
  { type: "function" as const, function: { name: "get_weather", description: "Weather forecast", parameters: weather } },
  { type: "function" as const, function: { name: "search", parameters: search } },
];
const validators: Record<string, ReturnType<typeof ajv.compile>> = { get_weather: ajv.compile(weather), search: ajv.compile(search) };
const messages = [{ role: "user" as const, content: "What is the weather in Paris?" }];
/**
 * Parallel calls: the grammar admits up to 8, at most 935 characters in Hermes blocks (search with five \uXXXX
 * escapes; LFM2's list 452), +1 end token; a reply must end for its finish reason and for content to stay empty.
 */
const PARALLEL_TOKENS = 960;

function expectValidCall(name: string, args: unknown, only?: string): void {
  if (only) expect(name).toBe(only);
  const validate = validators[name];
  if (!validate) throw new Error(`call to an undeclared tool ${JSON.stringify(name)}`);
  if (!validate(args)) throw new Error(`arguments ${JSON.stringify(args)} of ${name}: ${ajv.errorsText(validate.errors)}`);
}

beforeAll(async () => {
  const llamaPath = await ensureModel("tiny-llama");
  lfm2Path = await ensureModel("tiny-lfm2");
  server = await startServer([llamaPath, "--profile", "a", "--served-model-name", "tiny-chat", "--ctx-size", "1280", "--parallel", "4"]);
  openai = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "placeholder", maxRetries: 0, timeout: 600_000 });
  ollama = new Ollama({ host: server.baseUrl });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const models = () => [["hermes (ChatML)", "tiny-chat"], ["lfm2", lfm2Path]] as const;

// [name, index in models(), choices per forced-call request, requests on /api/chat]
describe.each([["hermes (ChatML)", 0, 8, 2], ["lfm2", 1, 20, 8]] as const)("%s", (_, which, draws, seeds) => {
  const model = () => models()[which][1];

  test(`tool_choice required: every one of ${draws} choices is a valid call`, async () => {
    const completion = await openai.chat.completions.create({
      model: model(), messages, tools, tool_choice: "required", parallel_tool_calls: false, n: draws, seed: 100, max_tokens: 300,
    });
    expect(completion.choices).toHaveLength(draws);
    for (const choice of completion.choices) {
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.content).toBeNull();
      const calls = choice.message.tool_calls ?? [];
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls).toHaveLength(1);
      for (const call of calls) {
        if (call.type !== "function") throw new Error("not a function call");
        expect(call.id).toStartWith("chatcmpl-tool-");
        expectValidCall(call.function.name, JSON.parse(call.function.arguments));
      }
    }
  }, 600_000);

  test("parallel calls: several valid calls may come in one reply", async () => {
    const completion = await openai.chat.completions.create({ model: model(), messages, tools, tool_choice: "required", n: 4, seed: 300, max_tokens: PARALLEL_TOKENS });
    for (const choice of completion.choices) {
      expect(choice.finish_reason).toBe("tool_calls");
      const calls = choice.message.tool_calls ?? [];
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);
      for (const call of calls) if (call.type === "function") expectValidCall(call.function.name, JSON.parse(call.function.arguments));
    }
  }, 600_000);

  test(`a named tool, streamed: ${draws} choices each stream one valid call to it`, async () => {
    const stream = await openai.chat.completions.create({
      model: model(), messages, tools, tool_choice: { type: "function", function: { name: "search" } }, n: draws, seed: 200, max_tokens: 300, stream: true,
    });
    const calls = new Map<number, { id?: string; name?: string; args: string; count: number }>();
    const finishes = new Map<number, string>();
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        expect(choice.delta.content ?? "").toBe("");
        for (const delta of choice.delta.tool_calls ?? []) {
          const call = calls.get(choice.index) ?? { args: "", count: 0 };
          if (delta.id) {
            call.id = delta.id;
            call.name = delta.function?.name;
            call.count++;
          }
          call.args += delta.function?.arguments ?? "";
          calls.set(choice.index, call);
        }
        if (choice.finish_reason) finishes.set(choice.index, choice.finish_reason);
      }
    }
    expect(calls.size).toBe(draws);
    for (const [index, call] of calls) {
      expect(call.count).toBe(1);
      expect(finishes.get(index)).toBe("tool_calls");
      expectValidCall(call.name!, JSON.parse(call.args), "search");
    }
  }, 600_000);

  // Fewer seeds than choices above: each reply may hold up to 8 parallel calls, so 20 took two minutes on 2 cores;
  // the tests above check the grammar's calls over more draws
  test(`/api/chat with tool_choice required: ${seeds} seeds, ${seeds} valid calls with object arguments`, async () => {
    const replies = await Promise.all(Array.from({ length: seeds }, (_, seed) =>
      ollama.chat({ model: model(), messages, tools, stream: false, options: { seed, num_predict: PARALLEL_TOKENS }, tool_choice: "required" } as Parameters<Ollama["chat"]>[0] & { stream: false }),
    ));
    for (const reply of replies) {
      const calls = reply.message.tool_calls ?? [];
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(reply.message.content).toBe("");
      for (const call of calls) expectValidCall(call.function.name, call.function.arguments);
    }
  }, 600_000);

  test("response_format json_schema and Ollama's format give valid JSON", async () => {
    const schema = { type: "object", properties: { answer: { type: "string", maxLength: 4 }, score: { type: "integer", minimum: 0, maximum: 10 } }, required: ["answer", "score"], additionalProperties: false };
    const validate = ajv.compile(schema);
    const completion = await openai.chat.completions.create({
      model: model(), messages, n: 4, seed: 7, max_tokens: 200, response_format: { type: "json_schema", json_schema: { name: "a", schema } },
    });
    const native = await ollama.chat({ model: model(), messages, format: schema, stream: false, options: { seed: 3, num_predict: 200 } });
    for (const text of [...completion.choices.map((c) => c.message.content!), native.message.content]) {
      const value = JSON.parse(text);
      if (!validate(value)) throw new Error(`${text}: ${ajv.errorsText(validate.errors)}`);
    }
    for (const choice of completion.choices) expect(choice.finish_reason).toBe("stop");
  }, 600_000);
});

describe("requests the chat path refuses", () => {
  const post = (body: object) => fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "tiny-chat", messages, max_tokens: 4, ...body }),
  });

  test("a named tool that is not declared", async () => {
    const response = await post({ tools, tool_choice: { type: "function", function: { name: "nope" } } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("does not match any of the specified `tools`");
  });
  test("tool_choice required without tools", async () => {
    expect((await post({ tool_choice: "required" })).status).toBe(400);
  });
  test("a tool schema keyword that cannot be enforced is named", async () => {
    const response = await post({ tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string", not: {} } } } } }], tool_choice: "required" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('"not"');
  });
  test("two constraints at once", async () => {
    const response = await post({ response_format: { type: "json_object" }, guided_choice: ["a", "b"] });
    expect(response.status).toBe(400);
  });
  test("a raw grammar llama.cpp rejects", async () => {
    expect((await post({ grammar: "root ::= undefined-rule" })).status).toBe(400);
  });
});

describe("structured output fields", () => {
  test("vLLM structured_outputs.choice and guided_regex", async () => {
    const choice = await openai.chat.completions.create({ model: "tiny-chat", messages, seed: 1, max_tokens: 20, structured_outputs: { choice: ["yes", "no"] } } as never) as OpenAI.ChatCompletion;
    expect(["yes", "no"]).toContain(choice.choices[0]!.message.content ?? "");
    const regex = await openai.chat.completions.create({ model: "tiny-chat", messages, seed: 1, max_tokens: 20, guided_regex: "[0-9]{2}-[a-c]" } as never) as OpenAI.ChatCompletion;
    expect(regex.choices[0]!.message.content ?? "").toMatch(/^[0-9]{2}-[a-c]$/);
  }, 120_000);

  test("text completions take the same fields (vLLM constrains /v1/completions too)", async () => {
    const choice = await openai.completions.create({ model: "tiny-chat", prompt: "Answer:", seed: 1, max_tokens: 20, structured_outputs: { choice: ["yes", "no"] } } as never) as OpenAI.Completion;
    expect(["yes", "no"]).toContain(choice.choices[0]!.text);
    const stream = await openai.completions.create({ model: "tiny-chat", prompt: "Code:", seed: 2, max_tokens: 20, guided_regex: "[0-9]{2}-[a-c]", stream: true } as never) as unknown as AsyncIterable<OpenAI.Completion>;
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    expect(text).toMatch(/^[0-9]{2}-[a-c]$/);
    const json = await openai.completions.create({ model: "tiny-chat", prompt: "JSON:", seed: 3, max_tokens: 60, response_format: { type: "json_schema", json_schema: { name: "n", schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false } } } } as never) as OpenAI.Completion;
    if (json.choices[0]!.finish_reason === "stop") expect(Object.keys(JSON.parse(json.choices[0]!.text))).toEqual(["n"]);
    else expect(json.choices[0]!.text).toMatch(/^\{\s*"n"/);
    const twoAtOnce = await fetch(`${server.baseUrl}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "tiny-chat", prompt: "x", guided_choice: ["a"], grammar: 'root ::= "b"' }) });
    expect(twoAtOnce.status).toBe(400);
  }, 120_000);

  test("tool_choice none hides the tools from the template", async () => {
    const withTools = await openai.chat.completions.create({ model: "tiny-chat", messages, tools, max_tokens: 1 });
    const hidden = await openai.chat.completions.create({ model: "tiny-chat", messages, tools, tool_choice: "none", max_tokens: 1 });
    expect(hidden.usage!.prompt_tokens).toBeLessThan(withTools.usage!.prompt_tokens);
  }, 120_000);
});

describe("reasoning forced by a raw grammar", () => {
  const grammar = 'root ::= "<think>" [a-z]{1,8} "</think>" [a-z]{1,8}';

  test("message.reasoning and content are split", async () => {
    const completion = await openai.chat.completions.create({ model: "tiny-chat", messages, seed: 5, max_tokens: 60, grammar } as never) as OpenAI.ChatCompletion;
    const message = completion.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning?: string };
    expect(message.reasoning).toMatch(/^[a-z]{1,8}$/);
    expect(message.content).toMatch(/^[a-z]{1,8}$/);
  }, 120_000);

  test("streamed: reasoning deltas first, then content, no tag leaks", async () => {
    const stream = await openai.chat.completions.create({ model: "tiny-chat", messages, seed: 6, max_tokens: 60, grammar, stream: true } as never) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    let reasoning = "";
    let content = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning?: string } | undefined;
      if (delta?.reasoning) {
        expect(content).toBe("");
        reasoning += delta.reasoning;
      }
      content += delta?.content ?? "";
    }
    expect(reasoning).toMatch(/^[a-z]{1,8}$/);
    expect(content).toMatch(/^[a-z]{1,8}$/);
  }, 120_000);
});
