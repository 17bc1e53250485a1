// The tool-call readers against the corpus: read whole, split at every position, and one character at
// a time, each must give the same answer text and calls, stream deltas that rebuild the arguments, and
// never put a marker in the answer text.
import { describe, expect, test } from "bun:test";
import { TOOL_CALL_FORMATS } from "../../src/chat/tool-calls/formats.ts";
import { parseLiteral, parsePythonicCalls } from "../../src/chat/tool-calls/literal-parser.ts";
import { ToolCallSyntaxError } from "../../src/chat/tool-calls/syntax-error.ts";
import { ToolCallOutput } from "../../src/chat/tool-calls/tool-call-output.ts";
import type { ChatOutput } from "../../src/chat/output-parser.ts";
import { TOOL_CALL_CORPUS, type CorpusCase } from "./tool-call-corpus.ts";

function read(c: CorpusCase, pieces: string[], options: { single?: boolean } = {}): ChatOutput[] {
  let n = 0;
  const parser = new ToolCallOutput(TOOL_CALL_FORMATS[c.syntax], { ...options, newId: () => `call-${n++}` });
  return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.finish()];
}

/** What a client makes of the events: the content, and each call rebuilt from its deltas. */
function summarise(events: ChatOutput[]) {
  const content = events.filter((e) => e.type === "content").map((e) => e.text).join("");
  const calls = events.flatMap((e) => (e.type === "tool_call" ? [e.call] : []));
  const rebuilt = new Map<number, { id?: string; name?: string; arguments: string }>();
  for (const e of events) {
    if (e.type !== "tool_call_delta") continue;
    const call = rebuilt.get(e.index) ?? { arguments: "" };
    if (e.id) call.id = e.id;
    if (e.name) call.name = e.name;
    call.arguments += e.arguments;
    rebuilt.set(e.index, call);
  }
  return { content, calls, rebuilt: [...rebuilt.values()] };
}

function expectCase(c: CorpusCase, events: ChatOutput[]): void {
  const { content, calls, rebuilt } = summarise(events);
  expect(content).toBe(c.content);
  expect(calls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(c.calls);
  expect(rebuilt).toEqual(calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) })));
  for (const event of events) expect(event.type === "content" && event.text === "").toBe(false);
  // A marker that is not part of the expected text never reaches the content, not even in part.
  const { start, end } = TOOL_CALL_FORMATS[c.syntax];
  for (const marker of [start, end]) {
    if (marker && marker.length > 1 && !c.content.includes(marker)) expect(content.includes(marker)).toBe(false);
  }
}

describe("ToolCallOutput over the corpus", () => {
  test("the corpus has at least 40 cases of each kind together", () => {
    expect(TOOL_CALL_CORPUS.length).toBeGreaterThanOrEqual(40);
    expect(TOOL_CALL_CORPUS.filter((c) => c.calls.length === 0 && c.content.length > 0).length).toBeGreaterThanOrEqual(10);
  });

  for (const c of TOOL_CALL_CORPUS) {
    test(`${c.syntax}: ${c.name}`, () => {
      expectCase(c, read(c, [c.text]));
      for (let at = 0; at <= c.text.length; at++) expectCase(c, read(c, [c.text.slice(0, at), c.text.slice(at)]));
      expectCase(c, read(c, [...c.text]));
    });
  }
});

describe("ToolCallOutput streaming", () => {
  const weather = TOOL_CALL_FORMATS.lfm2;

  test("text before a call streams at once; only a possible marker is held", () => {
    const parser = new ToolCallOutput(weather);
    expect(parser.push("Hello there <|tool")).toEqual([{ type: "content", text: "Hello there" }]);
    expect(parser.push("_call_start|>[f(a=1)]")).toEqual([]);
    const done = parser.push("<|tool_call_end|>");
    expect(done.map((e) => e.type)).toEqual(["tool_call_delta", "tool_call_delta", "tool_call"]);
    expect(done[0]).toMatchObject({ index: 0, name: "f", arguments: "" });
    expect((done[0] as { id: string }).id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
    expect(parser.finish()).toEqual([]);
  });

  test("text that turns out not to be a marker is released", () => {
    const parser = new ToolCallOutput(weather);
    expect(parser.push("a <|tool_c")).toEqual([{ type: "content", text: "a" }]);
    expect(parser.push("ould be")).toEqual([{ type: "content", text: " <|tool_could be" }]);
  });

  test("at most one call when parallel calls are off", () => {
    const c = TOOL_CALL_CORPUS.find((x) => x.name === "two calls with a list and a dict")!;
    const { calls } = summarise(read(c, [c.text], { single: true }));
    expect(calls.map((call) => call.name)).toEqual(["get_weather"]);
  });
});

describe("literal parser", () => {
  test("reads Python and JSON values", () => {
    expect(parseLiteral(`{"a": [1, -2.5, True, None, 'x'], "b": (1,)}`)).toEqual({ a: [1, -2.5, true, null, "x"], b: [1] });
  });

  test("errors carry the offset and an excerpt", () => {
    let error: unknown;
    try {
      parsePythonicCalls(`[get_weather(city "Paris")]`);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ToolCallSyntaxError);
    expect(error).toBeInstanceOf(SyntaxError);
    const syntaxError = error as ToolCallSyntaxError;
    expect(syntaxError.offset).toBe(18);
    expect(syntaxError.excerpt).toContain(`city "Paris"`);
    expect(syntaxError.message).toContain("expected = after the argument name city");
  });

  test("deep nesting needs no recursion", () => {
    const depth = 20_000;
    const value = parseLiteral(`${"[".repeat(depth)}1${"]".repeat(depth)}`);
    let inner: unknown = value;
    for (let i = 0; i < depth; i++) inner = (inner as unknown[])[0];
    expect(inner).toBe(1);
  });
});
