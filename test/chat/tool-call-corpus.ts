// Call texts as models write them, with what a reader must make of each: the answer text left over and
// the calls. Shared by the parser tests (whole, split at every position, one character at a time).
import type { ToolCallSyntax } from "../../src/chat/tool-calls/formats.ts";

export interface CorpusCase {
  name: string;
  syntax: ToolCallSyntax;
  text: string;
  content: string;
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
}

const S = "<|tool_call_start|>";
const E = "<|tool_call_end|>";
const lfm2 = (body: string) => `${S}${body}${E}`;
const hermes = (body: string) => `<tool_call>\n${body}\n</tool_call>`;
// (String.raw is kept to ASCII: Bun rewrites other characters in raw template text as \u escapes.)

const lfm2Cases: CorpusCase[] = [
  { name: "one call", syntax: "lfm2", text: lfm2(`[get_weather(city="Paris", days=3)]`), content: "", calls: [{ name: "get_weather", arguments: { city: "Paris", days: 3 } }] },
  {
    name: "two calls with a list and a dict", syntax: "lfm2", text: lfm2(`[get_weather(city="Paris", days=3), other(x=[1, 2], y={"k": True})]`), content: "",
    calls: [{ name: "get_weather", arguments: { city: "Paris", days: 3 } }, { name: "other", arguments: { x: [1, 2], y: { k: true } } }],
  },
  { name: "single quotes and quotes inside", syntax: "lfm2", text: lfm2(String.raw`[search(query='it\'s "quoted"')]`), content: "", calls: [{ name: "search", arguments: { query: `it's "quoted"` } }] },
  {
    name: "escapes", syntax: "lfm2", text: lfm2(String.raw`[f(s="line1\nline2\ttab \\ back \u00e9 \x41 \/ \d")]`), content: "",
    calls: [{ name: "f", arguments: { s: "line1\nline2\ttab \\ back é A / \\d" } }],
  },
  {
    name: "brackets and parentheses inside strings", syntax: "lfm2", text: lfm2(String.raw`[f(pattern="[a-z]+(\\d)", note="})]")]`), content: "",
    calls: [{ name: "f", arguments: { pattern: "[a-z]+(\\d)", note: "})]" } }],
  },
  { name: "unicode text", syntax: "lfm2", text: lfm2(`[translate(text="こんにちは 🌍", target="fr")]`), content: "", calls: [{ name: "translate", arguments: { text: "こんにちは 🌍", target: "fr" } }] },
  {
    name: "negative and float numbers", syntax: "lfm2", text: lfm2(`[move(x=-3, y=2.5, z=-0.125, e=1e3, small=-2.5E-2, plus=+4)]`), content: "",
    calls: [{ name: "move", arguments: { x: -3, y: 2.5, z: -0.125, e: 1000, small: -0.025, plus: 4 } }],
  },
  { name: "no arguments", syntax: "lfm2", text: lfm2(`[get_time()]`), content: "", calls: [{ name: "get_time", arguments: {} }] },
  {
    name: "nested structures", syntax: "lfm2",
    text: lfm2(`[create(user={"name": "Ann", "tags": ["a", "b"], "address": {"city": "Oslo", "zip": None}}, flags=[[1, 2], [3]])]`), content: "",
    calls: [{ name: "create", arguments: { user: { name: "Ann", tags: ["a", "b"], address: { city: "Oslo", zip: null } }, flags: [[1, 2], [3]] } }],
  },
  { name: "JSON literals", syntax: "lfm2", text: lfm2(`[f(a=true, b=false, c=null)]`), content: "", calls: [{ name: "f", arguments: { a: true, b: false, c: null } }] },
  { name: "Python literals", syntax: "lfm2", text: lfm2(`[f(a=True, b=False, c=None)]`), content: "", calls: [{ name: "f", arguments: { a: true, b: false, c: null } }] },
  {
    name: "text before and after", syntax: "lfm2", text: `I'll check the weather.\n${lfm2(`[get_weather(city="Paris")]`)}\nOne moment.`,
    content: "I'll check the weather.\n\nOne moment.", calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
  },
  {
    name: "two blocks", syntax: "lfm2", text: `${lfm2(`[a()]`)}\n${lfm2(`[b(x=1)]`)}`, content: "",
    calls: [{ name: "a", arguments: {} }, { name: "b", arguments: { x: 1 } }],
  },
  {
    name: "trailing commas", syntax: "lfm2", text: lfm2(`[f(a=1,), g(b=[1, 2,], d={"k": 1,},),]`), content: "",
    calls: [{ name: "f", arguments: { a: 1 } }, { name: "g", arguments: { b: [1, 2], d: { k: 1 } } }],
  },
  { name: "spaces everywhere", syntax: "lfm2", text: lfm2(` [ f ( a = 1 , b = "x" ) ] `), content: "", calls: [{ name: "f", arguments: { a: 1, b: "x" } }] },
  { name: "newlines between arguments", syntax: "lfm2", text: lfm2(`[f(\n  a=1,\n  b=2\n)]`), content: "", calls: [{ name: "f", arguments: { a: 1, b: 2 } }] },
  {
    name: "end marker inside a string", syntax: "lfm2", text: lfm2(`[note(text="use ${E} to finish")]`), content: "",
    calls: [{ name: "note", arguments: { text: `use ${E} to finish` } }],
  },
  {
    name: "JSON form", syntax: "lfm2", text: lfm2(`[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]`), content: "",
    calls: [{ name: "get_weather", arguments: { city: "Paris", days: 3 } }],
  },
  {
    name: "JSON form, two calls with ids", syntax: "lfm2", text: lfm2(`[{"name": "a", "arguments": {}, "id": "x1"}, {"name": "b", "arguments": {"n": -1.5}}]`), content: "",
    calls: [{ name: "a", arguments: {} }, { name: "b", arguments: { n: -1.5 } }],
  },
  { name: "tuple value", syntax: "lfm2", text: lfm2(`[f(point=(1, 2))]`), content: "", calls: [{ name: "f", arguments: { point: [1, 2] } }] },
  { name: "hyphen and dot in a name", syntax: "lfm2", text: lfm2(`[my-tool.v2(max_results=5)]`), content: "", calls: [{ name: "my-tool.v2", arguments: { max_results: 5 } }] },
  { name: "digit separators", syntax: "lfm2", text: lfm2(`[f(n=1_000)]`), content: "", calls: [{ name: "f", arguments: { n: 1000 } }] },
  { name: "end of reply instead of the end marker", syntax: "lfm2", text: `${S}[f(a=1)]`, content: "", calls: [{ name: "f", arguments: { a: 1 } }] },
  {
    name: "dict with odd keys and quotes", syntax: "lfm2", text: lfm2(String.raw`[f(d={'a b': 'c\'d', "e": ['f', "g"], 3: "three"})]`), content: "",
    calls: [{ name: "f", arguments: { d: { "a b": "c'd", e: ["f", "g"], "3": "three" } } }],
  },
  { name: "surrogate pair escape", syntax: "lfm2", text: lfm2(String.raw`[f(e="\ud83d\ude00")]`), content: "", calls: [{ name: "f", arguments: { e: "😀" } }] },
  { name: "a __proto__ key stays data", syntax: "lfm2", text: lfm2(`[f(d={"__proto__": 1})]`), content: "", calls: [{ name: "f", arguments: { d: JSON.parse(`{"__proto__": 1}`) } }] },
  // Malformed: the text comes back as content, exactly.
  { name: "malformed: unclosed call", syntax: "lfm2", text: lfm2(`[f(a=1]`), content: lfm2(`[f(a=1]`), calls: [] },
  { name: "malformed: positional argument", syntax: "lfm2", text: lfm2(`[f("Paris")]`), content: lfm2(`[f("Paris")]`), calls: [] },
  { name: "malformed: unterminated string", syntax: "lfm2", text: `${lfm2(`[f(a="oops)]`)} more`, content: `${lfm2(`[f(a="oops)]`)} more`, calls: [] },
  { name: "malformed: repeated argument", syntax: "lfm2", text: lfm2(`[f(a=1, a=2)]`), content: lfm2(`[f(a=1, a=2)]`), calls: [] },
  { name: "malformed: empty list", syntax: "lfm2", text: lfm2(`[]`), content: lfm2(`[]`), calls: [] },
  { name: "malformed: bare word value", syntax: "lfm2", text: lfm2(`[f(a=Paris)]`), content: lfm2(`[f(a=Paris)]`), calls: [] },
  {
    name: "malformed block, then a good one", syntax: "lfm2", text: `${lfm2(`[f(]`)} and ${lfm2(`[g()]`)}`,
    content: `${lfm2(`[f(]`)} and`, calls: [{ name: "g", arguments: {} }],
  },
  { name: "text with a partial marker", syntax: "lfm2", text: "Use <|tool to x <", content: "Use <|tool to x <", calls: [] },
  { name: "plain text keeps its whitespace", syntax: "lfm2", text: "  Hello\n\nworld \n", content: "  Hello\n\nworld \n", calls: [] },
];

const hermesCases: CorpusCase[] = [
  { name: "one call", syntax: "hermes", text: hermes(`{"name": "get_weather", "arguments": {"city": "Paris"}}`), content: "", calls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
  {
    name: "several calls", syntax: "hermes", text: `${hermes(`{"name": "a", "arguments": {"x": 1}}`)}\n${hermes(`{"name": "b", "arguments": {"y": [true, null]}}`)}`, content: "",
    calls: [{ name: "a", arguments: { x: 1 } }, { name: "b", arguments: { y: [true, null] } }],
  },
  {
    name: "text before", syntax: "hermes", text: `Sure, let me look.\n${hermes(`{"name": "search", "arguments": {"q": "llamas"}}`)}`,
    content: "Sure, let me look.", calls: [{ name: "search", arguments: { q: "llamas" } }],
  },
  { name: "text after", syntax: "hermes", text: `${hermes(`{"name": "f", "arguments": {}}`)}\nDone.`, content: "Done.", calls: [{ name: "f", arguments: {} }] },
  { name: "arguments as a JSON string", syntax: "hermes", text: `<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>`, content: "", calls: [{ name: "f", arguments: { a: 1 } }] },
  { name: "parameters instead of arguments", syntax: "hermes", text: hermes(`{"name": "f", "parameters": {"x": [1, {"y": null}]}}`), content: "", calls: [{ name: "f", arguments: { x: [1, { y: null }] } }] },
  {
    name: "end tag inside a string", syntax: "hermes", text: hermes(`{"name": "echo", "arguments": {"text": "</tool_call> is the end tag"}}`), content: "",
    calls: [{ name: "echo", arguments: { text: "</tool_call> is the end tag" } }],
  },
  {
    name: "braces and quotes inside strings", syntax: "hermes", text: hermes(String.raw`{"name": "f", "arguments": {"code": "if (a) { b[\"k\"] = '}'; }"}}`), content: "",
    calls: [{ name: "f", arguments: { code: `if (a) { b["k"] = '}'; }` } }],
  },
  {
    name: "unicode", syntax: "hermes", text: hermes(`{"name": "greet", "arguments": {"name": "Zoë", "emoji": "👋", "esc": "\\u00e9"}}`), content: "",
    calls: [{ name: "greet", arguments: { name: "Zoë", emoji: "👋", esc: "é" } }],
  },
  {
    name: "numbers", syntax: "hermes", text: hermes(`{"name": "f", "arguments": {"a": -1, "b": 0.5, "c": -2.5e-3, "d": 12345678901}}`), content: "",
    calls: [{ name: "f", arguments: { a: -1, b: 0.5, c: -0.0025, d: 12345678901 } }],
  },
  { name: "empty arguments", syntax: "hermes", text: hermes(`{"name": "ping", "arguments": {}}`), content: "", calls: [{ name: "ping", arguments: {} }] },
  { name: "no arguments key", syntax: "hermes", text: hermes(`{"name": "ping"}`), content: "", calls: [{ name: "ping", arguments: {} }] },
  {
    name: "a list in one block", syntax: "hermes", text: hermes(`[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": 1}}]`), content: "",
    calls: [{ name: "a", arguments: {} }, { name: "b", arguments: { k: 1 } }],
  },
  { name: "malformed JSON", syntax: "hermes", text: hermes(`{"name": "f", "arguments": {"a": }}`), content: hermes(`{"name": "f", "arguments": {"a": }}`), calls: [] },
  { name: "malformed: no name", syntax: "hermes", text: hermes(`{"arguments": {}}`), content: hermes(`{"arguments": {}}`), calls: [] },
  { name: "malformed: arguments not an object", syntax: "hermes", text: hermes(`{"name": "f", "arguments": [1]}`), content: hermes(`{"name": "f", "arguments": [1]}`), calls: [] },
  { name: "unfinished block at the end", syntax: "hermes", text: `text <tool_call>{"name": "f"`, content: `text <tool_call>{"name": "f"`, calls: [] },
];

const pythonicCases: CorpusCase[] = [
  { name: "bare list", syntax: "pythonic", text: `[get_weather(city="Paris")]`, content: "", calls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
  {
    name: "leading whitespace, two calls", syntax: "pythonic", text: `  \n[f(a=1), g(b="x")]`, content: "",
    calls: [{ name: "f", arguments: { a: 1 } }, { name: "g", arguments: { b: "x" } }],
  },
  { name: "text first is all text", syntax: "pythonic", text: `The answer is [f(a=1)]`, content: `The answer is [f(a=1)]`, calls: [] },
  { name: "text after the list", syntax: "pythonic", text: `[f(a=1)] done`, content: "done", calls: [{ name: "f", arguments: { a: 1 } }] },
  { name: "brackets inside strings", syntax: "pythonic", text: `[f(s="a]b)c")]`, content: "", calls: [{ name: "f", arguments: { s: "a]b)c" } }] },
  { name: "malformed: missing comma", syntax: "pythonic", text: `[f(a=1) g()]`, content: `[f(a=1) g()]`, calls: [] },
  { name: "prose in brackets", syntax: "pythonic", text: `[Note] this is text`, content: `[Note] this is text`, calls: [] },
];

export const TOOL_CALL_CORPUS: CorpusCase[] = [...lfm2Cases, ...hermesCases, ...pythonicCases];
