// Splits Go text/template source into tokens: text between actions, and the words inside {{ }}.
// Trim markers ({{- and -}}) are applied here, to the neighbouring text, and comments are dropped.
import { TemplateSyntaxError, positionOf } from "./errors.ts";

export type TokenKind =
  | "text" | "open" | "close" | "space"
  | "field" | "variable" | "dot" | "identifier"
  | "string" | "number" | "char"
  | "declare" | "assign" | "pipe" | "leftParen" | "rightParen" | "comma";

export interface Token {
  kind: TokenKind;
  /** Text for text tokens, the decoded value of strings, the name of fields/variables/identifiers. */
  value: string;
  offset: number;
  /** Numbers: the value and whether the literal is an integer. */
  number?: number;
  isInteger?: boolean;
}

const isSpace = (ch: string | undefined) => ch === " " || ch === "\t" || ch === "\r" || ch === "\n";
const isWordChar = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{Nd}_]/u.test(ch);
const NUMBER = /[+-]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/y;
const SIMPLE_ESCAPES: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"' };

export function lex(source: string): Token[] {
  const tokens: Token[] = [];
  const fail: (reason: string, offset: number) => never = (reason, offset) => {
    throw new TemplateSyntaxError(reason, positionOf(source, offset));
  };
  let pos = 0;
  let trimNextText = false;

  while (pos <= source.length) {
    const open = source.indexOf("{{", pos);
    const end = open < 0 ? source.length : open;
    const trimLeft = open >= 0 && source[open + 2] === "-" && isSpace(source[open + 3]);
    let text = source.slice(pos, end);
    if (trimNextText) text = text.replace(/^[ \t\r\n]+/, "");
    if (trimLeft) text = text.replace(/[ \t\r\n]+$/, "");
    if (text) tokens.push({ kind: "text", value: text, offset: pos });
    if (open < 0) break;
    pos = open + 2 + (trimLeft ? 2 : 0);
    trimNextText = false;

    if (source.startsWith("/*", pos)) {
      const close = source.indexOf("*/", pos + 2);
      if (close < 0) fail("unclosed comment", open);
      pos = close + 2;
      if (isSpace(source[pos]) && source.startsWith("-}}", pos + 1)) {
        trimNextText = true;
        pos += 4;
      } else if (source.startsWith("}}", pos)) pos += 2;
      else fail("comment ends before closing delimiter", pos);
      continue;
    }

    tokens.push({ kind: "open", value: "{{", offset: open });
    let depth = 0;
    for (;;) {
      const ch = source[pos];
      const start = pos;
      if (ch === undefined) fail("unclosed action", open);
      if (isSpace(ch)) {
        while (isSpace(source[pos])) pos++;
        if (source.startsWith("-}}", pos)) {
          if (depth > 0) fail("unclosed left paren", start);
          tokens.push({ kind: "close", value: "}}", offset: pos });
          trimNextText = true;
          pos += 3;
          break;
        }
        tokens.push({ kind: "space", value: " ", offset: start });
        continue;
      }
      if (source.startsWith("}}", pos)) {
        if (depth > 0) fail("unclosed left paren", start);
        tokens.push({ kind: "close", value: "}}", offset: pos });
        pos += 2;
        break;
      }
      if (ch === '"' || ch === "'" || ch === "`") {
        const { value, next } = ch === "`" ? rawString(source, pos, fail) : quoted(source, pos, ch, fail);
        if (ch === "'") {
          const code = value.codePointAt(0);
          if (code === undefined || String.fromCodePoint(code) !== value) fail("malformed character constant", start);
          tokens.push({ kind: "char", value, offset: start, number: code, isInteger: true });
        } else tokens.push({ kind: "string", value, offset: start });
        pos = next;
      } else if (ch === "$") {
        pos++;
        while (isWordChar(source[pos])) pos++;
        tokens.push({ kind: "variable", value: source.slice(start, pos), offset: start });
      } else if (ch === "." && !/\d/.test(source[pos + 1] ?? "")) {
        pos++;
        while (isWordChar(source[pos])) pos++;
        tokens.push(pos === start + 1 ? { kind: "dot", value: ".", offset: start } : { kind: "field", value: source.slice(start + 1, pos), offset: start });
      } else if (/[\d.+-]/.test(ch)) {
        NUMBER.lastIndex = pos;
        const match = NUMBER.exec(source);
        if (!match || isWordChar(source[NUMBER.lastIndex]) || source[NUMBER.lastIndex] === ".") fail(`bad number syntax: "${source.slice(pos, pos + 10).split(/[\s}]/)[0]}"`, start);
        tokens.push(numberToken(match![0], start));
        pos = NUMBER.lastIndex;
      } else if (isWordChar(ch)) {
        while (isWordChar(source[pos])) pos++;
        tokens.push({ kind: "identifier", value: source.slice(start, pos), offset: start });
      } else if (ch === ":" && source[pos + 1] === "=") {
        tokens.push({ kind: "declare", value: ":=", offset: start });
        pos += 2;
      } else {
        const single: Record<string, TokenKind> = { "=": "assign", "|": "pipe", "(": "leftParen", ")": "rightParen", ",": "comma" };
        const kind = single[ch];
        if (!kind) fail(`unexpected character "${ch}" in action`, start);
        if (kind === "leftParen") depth++;
        if (kind === "rightParen" && --depth < 0) fail("unexpected right paren", start);
        tokens.push({ kind: kind!, value: ch, offset: start });
        pos++;
      }
    }
  }
  return tokens;
}

function numberToken(literal: string, offset: number): Token {
  const clean = literal.replace(/_/g, "");
  const sign = clean.startsWith("-") ? -1 : 1;
  const digits = clean.replace(/^[+-]/, "");
  let value: number;
  let isInteger = true;
  if (/^0[xX]/.test(digits)) value = parseInt(digits.slice(2), 16);
  else if (/^0[bB]/.test(digits)) value = parseInt(digits.slice(2), 2);
  else if (/^0[oO]/.test(digits)) value = parseInt(digits.slice(2), 8);
  else if (/^0\d+$/.test(digits)) value = parseInt(digits, 8);
  else {
    value = Number(digits);
    isInteger = /^\d+$/.test(digits);
  }
  return { kind: "number", value: literal, offset, number: sign * value, isInteger };
}

function rawString(source: string, start: number, fail: (reason: string, offset: number) => never) {
  const close = source.indexOf("`", start + 1);
  if (close < 0) fail("unterminated raw quoted string", start);
  return { value: source.slice(start + 1, close), next: close + 1 };
}

/** A Go interpreted string or character literal, escapes decoded. */
function quoted(source: string, start: number, quote: string, fail: (reason: string, offset: number) => never) {
  let value = "";
  let pos = start + 1;
  for (;;) {
    const ch = source[pos];
    if (ch === undefined || ch === "\n") return fail(`unterminated ${quote === "'" ? "character constant" : "quoted string"}`, start);
    if (ch === quote) return { value, next: pos + 1 };
    if (ch !== "\\") {
      value += ch;
      pos++;
      continue;
    }
    const escape = source[pos + 1] ?? "";
    if (escape in SIMPLE_ESCAPES) {
      value += SIMPLE_ESCAPES[escape];
      pos += 2;
      continue;
    }
    const widths: Record<string, number> = { x: 2, u: 4, U: 8 };
    const width = widths[escape];
    const octal = /[0-7]/.test(escape) ? source.slice(pos + 1, pos + 4) : "";
    if (width !== undefined && /^[0-9a-fA-F]+$/.test(source.slice(pos + 2, pos + 2 + width)) && source.slice(pos + 2, pos + 2 + width).length === width) {
      const code = parseInt(source.slice(pos + 2, pos + 2 + width), 16);
      value += escape === "x" ? String.fromCharCode(code) : String.fromCodePoint(code);
      pos += 2 + width;
    } else if (/^[0-7]{3}$/.test(octal)) {
      value += String.fromCharCode(parseInt(octal, 8));
      pos += 4;
    } else return fail(`invalid escape "\\${escape}" in quoted string`, pos);
  }
}
