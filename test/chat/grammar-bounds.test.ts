// Bounds on grammars and on the inputs that become grammars: refused with StructuredOutputError (a 400)
// before any recursive code, JS or llama.cpp, sees them; ordinary grammars pass.
import { describe, expect, test } from "bun:test";
import { checkGrammarBounds } from "../../src/chat/structured/grammar-bounds.ts";
import { choiceGrammar, prefixTreeGrammar } from "../../src/chat/structured/choice-grammar.ts";
import { constraintGrammar, jsonSchemaToGbnf, regexToGbnf, StructuredOutputError, toolCallGrammar } from "../../src/chat/structured/index.ts";
import { TOOL_CALL_SYNTAXES } from "../../src/chat/tool-calls/formats.ts";
import type { ToolDefinition } from "../../src/chat/types.ts";

const refusal = (work: () => unknown): string => {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(StructuredOutputError);
    return (error as Error).message;
  }
  throw new Error("expected a StructuredOutputError");
};

describe("checkGrammarBounds", () => {
  test("passes ordinary grammars, comments and literals holding brackets included", () => {
    checkGrammarBounds('root ::= ("a" | "b")* [0-9]{1,3} x\nx ::= "c(((" | [(] | . # comment (((((\n');
    checkGrammarBounds(jsonSchemaToGbnf({ type: "object", properties: { a: { type: "array", items: { type: "integer" }, maxItems: 50 } } }));
  });

  test("refuses deep nesting, wide alternations, huge repetitions and long texts", () => {
    expect(refusal(() => checkGrammarBounds(`root ::= ${"(".repeat(20000)}"a"${")".repeat(20000)}`))).toContain("nest more than 100 deep");
    expect(refusal(() => checkGrammarBounds(`root ::= ${Array.from({ length: 600 }, (_, i) => `"w${i}"`).join(" | ")}`))).toContain("more than 128 alternatives");
    expect(refusal(() => checkGrammarBounds('root ::= "a"{0,100000000}'))).toContain("expand to more than 500000 elements");
    const repeatedLiterals = Array.from({ length: 21 }, () => '("abcdefghijklmnopqrstuvwxyz"{0,1000})').join(" ");
    expect(refusal(() => checkGrammarBounds(`root ::= ${repeatedLiterals}`))).toContain("expand to more than 500000 elements");
    checkGrammarBounds('root ::= ("ab"{0,1000}){0,1000}');
    expect(refusal(() => checkGrammarBounds(`root ::= "${"a".repeat(2_000_000)}"`))).toContain("characters long");
  });

  test("refuses rules that open too many parse stacks at once, through other rules too", () => {
    const doubling = ["root ::= r0", ...Array.from({ length: 12 }, (_, i) => `r${i} ::= r${i + 1} | r${i + 1} "x"`), 'r12 ::= "a"'].join("\n");
    expect(refusal(() => checkGrammarBounds(doubling))).toMatch(/opens \d+ parse stacks at once, more than 128/);
    const shallow = ["root ::= r0", ...Array.from({ length: 5 }, (_, i) => `r${i} ::= r${i + 1} | r${i + 1} "x"`), 'r5 ::= "a"'].join("\n");
    checkGrammarBounds(shallow);
    const wideThroughRules = `root ::= ${Array.from({ length: 20 }, (_, i) => `w${i}`).join(" | ")}\n${Array.from({ length: 20 }, (_, i) => `w${i} ::= ${Array.from({ length: 10 }, (_, k) => `"${i}-${k}"`).join(" | ")}`).join("\n")}`;
    expect(refusal(() => checkGrammarBounds(wideThroughRules))).toContain("opens 200 parse stacks");
    expect(refusal(() => checkGrammarBounds(`root ::= r0\n${Array.from({ length: 1500 }, (_, i) => `r${i} ::= r${i + 1}`).join("\n")}`))).toContain("more than 1000 deep");
  });

  test("counts alternatives per group and per rule, not per grammar", () => {
    const rules = Array.from({ length: 20 }, (_, r) => `r${r} ::= ${Array.from({ length: 100 }, (_, i) => `"x${i}"`).join(" | ")}`);
    checkGrammarBounds(`root ::= ${rules.map((_, r) => `r${r}`).join(" ")}\n${rules.join("\n")}\n`);
    checkGrammarBounds('root ::= ("a"? "b"?)* ("c" | "d")+ ""');
  });
});

describe("inputs that become grammars", () => {
  test("a JSON schema nested 10,000 deep, and a regex of 10,000 nested groups, are refused without a stack overflow", () => {
    let schema: unknown = { type: "string" };
    for (let i = 0; i < 10_000; i++) schema = { type: "array", items: schema };
    expect(refusal(() => constraintGrammar({ type: "json_schema", schema }))).toContain("nests more than 128 levels deep");
    expect(refusal(() => regexToGbnf(`${"(".repeat(10_000)}a${")".repeat(10_000)}`, "text"))).toContain("nest more than 100 deep");
    expect(refusal(() => constraintGrammar({ type: "json_schema", schema: { type: "string", maxLength: 1e9 } }))).toContain("expand to more than");
  });

  test("an object of 50,000 properties is refused as too large a grammar, without a stack overflow; 2,000 required ones pass", () => {
    const properties = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "integer" }]));
    expect(refusal(() => constraintGrammar({ type: "json_schema", schema: { type: "object", properties: properties(50_000) } }))).toContain("characters long");
    const required = Array.from({ length: 2_000 }, (_, i) => `p${i}`);
    checkGrammarBounds(constraintGrammar({ type: "json_schema", schema: { type: "object", properties: properties(2_000), required } }));
  });

  test("choices and enums are written as prefix trees that keep every option", () => {
    expect(choiceGrammar(["apple", "apricot", "banana", "", "ap"])).toBe('("" | "ap" ("" | "ple" | "ricot") | "banana")');
    expect(choiceGrammar(["yes", "yes"])).toBe('"yes"');
    const many = constraintGrammar({ type: "choice", choices: Array.from({ length: 8000 }, (_, i) => `option ${i}`) });
    expect(many.startsWith('root ::= "option " (')).toBe(true);
    const enumGrammar = jsonSchemaToGbnf({ enum: Array.from({ length: 3000 }, (_, i) => `v${i}`) });
    expect(enumGrammar).toContain('root ::= "\\"v"');
    checkGrammarBounds(enumGrammar);
  });

  test("a choice of 2,000 options with nothing in common past one character is still refused", () => {
    const options = Array.from({ length: 2000 }, (_, i) => String.fromCodePoint(0x4e00 + i));
    expect(refusal(() => constraintGrammar({ type: "choice", choices: options }))).toContain("more than 128 alternatives");
  });

  test("a prefix tree's strings keep what follows each, a string that is another's prefix included", () => {
    const label = { what: "the test strings", keyword: "test" };
    expect(prefixTreeGrammar([{ text: "get(", then: "a" }, { text: "get_all(", then: "b" }, { text: "set(", then: "a" }], label))
      .toBe('("get" ("(" a | "_all(" b) | "set(" a)');
    expect(prefixTreeGrammar([{ text: "ab", then: "x" }, { text: "abc", then: "y" }, { text: "ab", then: "z" }], label)).toBe('"ab" ((x | z) | "c" y)');
    expect(prefixTreeGrammar([{ text: "only", then: "" }], label)).toBe('"only"');
  });
});

describe("forced tool calls among many tools", () => {
  // Each tool's arguments differ, so each keeps its own rule (the rule set shares identical bodies).
  const tool = (name: string): ToolDefinition => ({
    type: "function", function: { name, parameters: { type: "object", properties: { mode: { enum: ["a", name] } }, required: ["mode"], additionalProperties: false } },
  });
  const verbs = ["get", "set", "list", "find", "make", "drop", "open", "sync"];
  const names = Array.from({ length: 1000 }, (_, i) => `${verbs[i % verbs.length]}_item_${i}`);

  test.each(TOOL_CALL_SYNTAXES)("%s: 1,000 tools give a grammar within the bounds that names every tool once", (syntax) => {
    const grammar = toolCallGrammar({ tools: names.map(tool), syntax, choice: "required" });
    checkGrammarBounds(grammar);
    // Each tool keeps its own arguments rule; the names share their prefixes in one tree.
    const rules = new Set(grammar.split("\n").map((line) => line.split(" ::= ")[0]));
    expect(names.filter((name) => !rules.has(`call-${name.replace(/_/g, "-")}-arguments`))).toEqual([]);
    const call = grammar.split("\n").find((line) => line.startsWith("call ::= "))!;
    expect(call.split("_item_").length - 1).toBeLessThan(names.length);
    // The flat alternation it replaces is refused.
    expect(refusal(() => checkGrammarBounds(`root ::= ${names.map((name) => `"${name}("`).join(" | ")}`))).toContain("more than 128 alternatives");
  });

  test("a tool whose parameters nest 10,000 deep is refused before the converter recurses", () => {
    let parameters: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10_000; i++) parameters = { type: "object", properties: { a: parameters } };
    for (const syntax of TOOL_CALL_SYNTAXES) {
      expect(refusal(() => toolCallGrammar({ tools: [{ type: "function", function: { name: "f", parameters } }], syntax, choice: "required" }))).toContain("nests more than 128 levels deep");
    }
  });

  test("names that differ from their first character on, past 128 of them, are still refused as the request's error", () => {
    const wide = Array.from({ length: 300 }, (_, i) => tool(String.fromCodePoint(0x4e00 + i)));
    expect(refusal(() => toolCallGrammar({ tools: wide, syntax: "hermes", choice: "required" }))).toContain("more than 128 alternatives");
  });
});
