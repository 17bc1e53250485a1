// LFM2 models with the templates published GGUFs carry (the original LFM2 one and LFM2.5's, verbatim) call
// tools in their own syntax on every chat route: forced calls (tool_choice required, or a named tool in
// either shape) are written pythonic between <|tool_call_start|> and <|tool_call_end|> (the logprobs show
// the tokens) and come back as tool_calls; a call the model writes on its own is parsed, not left in content.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Ollama } from "ollama";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

let ollamaServer: RunningServer;
let lmStudioServer: RunningServer;
const paths: Record<string, string> = {};

const search = { type: "object", properties: { query: { enum: ["ab", "cd"] } }, required: ["query"], additionalProperties: false };
const tools = [
  { type: "function" as const, function: { name: "search", description: "Search", parameters: search } },
  { type: "function" as const, function: { name: "now", description: "The time", parameters: { type: "object", properties: {} } } },
];
const messages = [{ role: "user" as const, content: "Look it up" }];
const NATIVE = '<|tool_call_start|>[search(query="ab")]<|tool_call_end|>';
/**
 * tool_choice "required" allows up to 8 calls in one list, which must close for any call to be read: at most
 * 204 characters (`<|tool_call_start|>[search(query="ab" ), …]<|tool_call_end|>`), +1 end token.
 */
const REQUIRED_TOKENS = 224;

function expectCalls(calls: Array<{ function: { name: string; arguments: unknown } }> | undefined, only?: string): void {
  expect(calls?.length ?? 0).toBeGreaterThanOrEqual(1);
  for (const call of calls!) {
    const args = typeof call.function.arguments === "string" ? JSON.parse(call.function.arguments) : call.function.arguments;
    if (only) expect(call.function.name).toBe(only);
    if (call.function.name === "search") expect(["ab", "cd"]).toContain(args.query);
    else expect([call.function.name, args]).toEqual(["now", {}]);
  }
}

/** The completion tokens' text from logprobs (one entry per token): forced calls are written in LFM2's syntax. */
function expectNativeTokens(tokens: string[], completionTokens: number): void {
  expect(tokens).toHaveLength(completionTokens);
  expect(tokens.join("")).toMatch(/^<\|tool_call_start\|>\[(search|now)\(.*\)\]<\|tool_call_end\|>$/);
}

beforeAll(async () => {
  for (const name of ["tiny-lfm2-original", "tiny-lfm25"] as const) paths[name] = await ensureModel(name);
  ollamaServer = await startServer([paths["tiny-lfm2-original"]!, "--profile", "a", "--ctx-size", "512", "--parallel", "4"]);
  lmStudioServer = await startServer([paths["tiny-lfm2-original"]!, "--profile", "c", "--ctx-size", "512", "--parallel", "4"]);
}, 120_000);
afterAll(async () => {
  await ollamaServer?.stop();
  await lmStudioServer?.stop();
});

describe.each(["tiny-lfm2-original", "tiny-lfm25"] as const)("%s", (name) => {
  const model = () => paths[name]!;
  const openai = () => new OpenAI({ baseURL: `${ollamaServer.baseUrl}/v1`, apiKey: "x", maxRetries: 0, timeout: 600_000 });

  test("/v1/chat/completions: tool_choice required gives tool_calls, written in LFM2's tokens", async () => {
    const completion = await openai().chat.completions.create({ model: model(), messages, tools, tool_choice: "required", seed: 3, max_tokens: REQUIRED_TOKENS, logprobs: true });
    for (const choice of completion.choices) {
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.content).toBeNull();
      expectCalls(choice.message.tool_calls as never);
    }
    expectNativeTokens(completion.choices[0]!.logprobs!.content!.map((entry) => entry.token), completion.usage!.completion_tokens);
  }, 600_000);

  test("/v1/chat/completions streamed: a named tool in the flat shape {type, name}", async () => {
    const stream = await openai().chat.completions.create({
      model: model(), messages, tools, tool_choice: { type: "function", name: "search" } as never, seed: 4, max_tokens: 60, stream: true,
    });
    let name = "";
    let args = "";
    let finish = "";
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? "";
        args += delta.function?.arguments ?? "";
      }
      expect(chunk.choices[0]?.delta.content ?? "").toBe("");
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expectCalls([{ function: { name, arguments: args } }], "search");
  }, 600_000);

  test("/v1/chat/completions: a call the model writes itself is parsed, not left in content", async () => {
    // <|...|> in GBNF is the special token itself, as a trained model writes it.
    const completion = await openai().chat.completions.create({
      model: model(), messages, tools, seed: 5, max_tokens: 60, logprobs: true, grammar: `root ::= <|tool_call_start|> ${JSON.stringify(NATIVE.slice(19, -17))} <|tool_call_end|>`,
    } as never) as OpenAI.ChatCompletion;
    const choice = completion.choices[0]!;
    // Special tokens carry their text in logprobs.
    const tokens = choice.logprobs!.content!.map((entry) => entry.token);
    expect([tokens[0], tokens.at(-1), tokens.join("")]).toEqual(["<|tool_call_start|>", "<|tool_call_end|>", NATIVE]);
    expect(choice.message.content).toBeNull();
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls?.map((call) => [call.type === "function" ? call.function.name : "", call.type === "function" ? JSON.parse(call.function.arguments) : {}])).toEqual([["search", { query: "ab" }]]);
  }, 600_000);

  test("/api/chat: required, and a named tool in either shape, streamed and not", async () => {
    const ollama = new Ollama({ host: ollamaServer.baseUrl });
    const required = await ollama.chat({ model: model(), messages, tools, stream: false, options: { seed: 6, num_predict: REQUIRED_TOKENS }, tool_choice: "required", logprobs: true } as never) as unknown as {
      message: { content: string; tool_calls?: Array<{ function: { name: string; arguments: unknown } }> }; eval_count: number; logprobs: Array<{ token: string }>;
    };
    expect(required.message.content).toBe("");
    expectCalls(required.message.tool_calls);
    expectNativeTokens(required.logprobs.map((entry) => entry.token), required.eval_count);
    for (const toolChoice of [{ type: "function", name: "now" }, { type: "function", function: { name: "now" } }]) {
      const stream = await ollama.chat({ model: model(), messages, tools, stream: true, options: { seed: 7, num_predict: 60 }, tool_choice: toolChoice } as never) as unknown as AsyncIterable<{ message: { content: string; tool_calls?: Array<{ function: { name: string; arguments: unknown } }> } }>;
      const calls: Array<{ function: { name: string; arguments: unknown } }> = [];
      for await (const part of stream) {
        expect(part.message.content).toBe("");
        calls.push(...(part.message.tool_calls ?? []));
      }
      expect(calls).toHaveLength(1);
      expectCalls(calls, "now");
    }
  }, 600_000);
});

describe("profile c (LM Studio)", () => {
  const model = () => paths["tiny-lfm2-original"]!;

  for (const route of ["/api/v0/chat/completions", "/v1/chat/completions"]) {
    test(`${route}: required and named (flat shape) give LFM2 tool_calls`, async () => {
      for (const [toolChoice, only] of [["required", undefined], [{ type: "function", name: "search" }, "search"]] as const) {
        const response = await fetch(`${lmStudioServer.baseUrl}${route}`, {
          method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: model(), messages, tools, tool_choice: toolChoice, seed: 8, max_tokens: REQUIRED_TOKENS }),
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { choices: Array<{ finish_reason: string; message: { tool_calls?: Array<{ function: { name: string; arguments: string } }> } }> };
        expect(body.choices[0]!.finish_reason).toBe("tool_calls");
        expectCalls(body.choices[0]!.message.tool_calls, only);
      }
    }, 600_000);
  }
});

describe("tool_choice shapes on /api/chat are never an error where Ollama serves the request", () => {
  const post = (body: object) => fetch(`${ollamaServer.baseUrl}/api/chat`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: paths["tiny-lfm2-original"], messages, stream: false, options: { num_predict: 2, seed: 1 }, ...body }),
  });

  for (const [label, body] of [
    ["an unknown shape", { tools, tool_choice: { type: "any" } }],
    ["a number", { tools, tool_choice: 3 }],
    ["a named tool that is not declared", { tools, tool_choice: { type: "function", name: "nope" } }],
    ["required without tools", { tool_choice: "required" }],
    ["required beside format", { tools, tool_choice: "required", format: "json" }],
  ] as const) {
    test(`${label} is ignored with a warning`, async () => {
      const before = ollamaServer.stderr().length;
      const response = await post(body);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { done: boolean }).done).toBe(true);
      expect(ollamaServer.stderr().slice(before)).toContain(`ignored tool_choice ${JSON.stringify(body.tool_choice)}`);
    }, 120_000);
  }

  test("/v1 still refuses a shape it cannot read, in its own error shape", async () => {
    const response = await fetch(`${ollamaServer.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: paths["tiny-lfm2-original"], messages, tools, tool_choice: { type: "any" }, max_tokens: 2 }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("tool_choice");
  }, 120_000);
});
