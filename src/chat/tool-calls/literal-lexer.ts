// Splits call text into the tokens of Python literals and JSON (a superset of both): punctuation,
// single- or double-quoted strings with escapes, numbers, and bare names (True, null, function names).
import { ToolCallSyntaxError } from "./syntax-error.ts";

export type Punctuation = "[" | "]" | "(" | ")" | "{" | "}" | "," | ":" | "=";

export type LiteralToken =
  | { kind: "punct"; value: Punctuation; at: number }
  | { kind: "string"; value: string; at: number }
  | { kind: "number"; value: number; at: number }
  | { kind: "name"; value: string; at: number }
  | { kind: "end"; at: number };

const PUNCTUATION = new Set<string>(["[", "]", "(", ")", "{", "}", ",", ":", "="]);
// Python's forms too: `1_000`, `5.`, `.5`, a leading `+`.
const NUMBER = /[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d+)?/y;
// Tool and argument names may carry `-` and `.` (OpenAI allows them); a name never starts with one.
const NAME = /[A-Za-z_][A-Za-z0-9_.\-]*/y;
const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", v: "\v", a: "\x07", "0": "\0",
  "\\": "\\", "'": "'", '"': '"', "/": "/", "\n": "",
};

export class LiteralLexer {
  private position = 0;

  constructor(readonly text: string) {}

  next(): LiteralToken {
    const text = this.text;
    while (this.position < text.length && WHITESPACE.has(text[this.position]!)) this.position++;
    const at = this.position;
    const char = text[at];
    if (char === undefined) return { kind: "end", at };
    if (PUNCTUATION.has(char)) {
      this.position++;
      return { kind: "punct", value: char as Punctuation, at };
    }
    if (char === '"' || char === "'") return { kind: "string", value: this.readString(char), at };
    const number = this.match(NUMBER);
    if (number !== undefined) {
      const value = Number(number.replaceAll("_", ""));
      if (!Number.isFinite(value)) throw this.error(`number ${number} is out of range`, at);
      return { kind: "number", value, at };
    }
    const name = this.match(NAME);
    if (name !== undefined) return { kind: "name", value: name, at };
    throw this.error(`unexpected character ${JSON.stringify(char)}`, at);
  }

  error(problem: string, at: number): ToolCallSyntaxError {
    return new ToolCallSyntaxError(problem, this.text, at);
  }

  private match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.position;
    const match = pattern.exec(this.text);
    if (!match) return undefined;
    this.position = pattern.lastIndex;
    return match[0];
  }

  /** Reads a string whose opening quote is at the current position; unknown escapes keep their backslash, as Python does. */
  private readString(quote: string): string {
    const text = this.text;
    const start = this.position;
    let value = "";
    let i = start + 1;
    for (;;) {
      const char = text[i];
      if (char === undefined) throw this.error("unterminated string", start);
      if (char === quote) break;
      if (char !== "\\") {
        value += char;
        i++;
        continue;
      }
      const escaped = text[i + 1];
      if (escaped === undefined) throw this.error("unterminated string", start);
      const simple = SIMPLE_ESCAPES[escaped];
      if (simple !== undefined) {
        value += simple;
        i += 2;
      } else if (escaped === "x" || escaped === "u" || escaped === "U") {
        const digits = escaped === "x" ? 2 : escaped === "u" ? 4 : 8;
        const hex = text.slice(i + 2, i + 2 + digits);
        if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) throw this.error(`invalid \\${escaped} escape`, i);
        const code = Number.parseInt(hex, 16);
        if (code > 0x10ffff) throw this.error(`invalid \\${escaped} escape`, i);
        value += String.fromCodePoint(code);
        i += 2 + digits;
      } else {
        value += `\\${escaped}`;
        i += 2;
      }
    }
    this.position = i + 1;
    return value;
  }
}
