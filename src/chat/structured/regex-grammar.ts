// A regular expression as a GBNF expression, for vLLM's `regex` constraint and JSON Schema's `pattern`.
// Handles literals, `.`, classes (ranges, negation, \d \w \s), groups, alternation and the quantifiers
// * + ? {n} {n,} {n,m} (lazy forms too). Anchors are accepted only at the ends; lookarounds and
// back-references cannot be expressed in GBNF and are refused.
import { alternatives, charClass, literal, repeat } from "./gbnf.ts";
import { StructuredOutputError } from "./errors.ts";
import { checkRegexDepth } from "./nesting.ts";

type Range = [string, string];

/** Where the text the regex matches is written: as is, or inside a JSON string (quotes and backslashes escaped). */
export type RegexTarget = "text" | "json-string";

const DIGIT: Range[] = [["0", "9"]];
const WORD: Range[] = [["a", "z"], ["A", "Z"], ["0", "9"], ["_", "_"]];
const SPACE: Range[] = [[" ", " "], ["\t", "\r"]];
/** Code points llama.cpp decodes from malformed UTF-8 (see the `char` rule of json-schema-grammar.ts). */
const MALFORMED: Range[] = [["\uD800", "\uDFFF"]];
/** …and past U+10FFFF, which no JS string can hold: written straight into negated classes. */
const BEYOND_UNICODE = "\\U00110000-\\U003FFFFF";
/** Characters a JSON string cannot hold raw. */
const JSON_RAW_EXCLUDED: Range[] = [["\x00", "\x1f"], ['"', '"'], ["\\", "\\"]];

class RegexReader {
  private index = 0;
  constructor(private readonly source: string, private readonly target: RegexTarget) {}

  fail(what: string): never {
    throw new StructuredOutputError(`Cannot use regex ${JSON.stringify(this.source)}: ${what} (at offset ${this.index})`);
  }

  /** The whole pattern; `anchored` tells whether it was written with ^ and $. */
  read(): { expression: string; anchoredStart: boolean; anchoredEnd: boolean } {
    const anchoredStart = this.source.startsWith("^");
    if (anchoredStart) this.index = 1;
    const expression = this.alternation();
    let anchoredEnd = false;
    if (this.peek() === "$" && this.index === this.source.length - 1) {
      anchoredEnd = true;
      this.index++;
    }
    if (this.index < this.source.length) this.fail(`unexpected ${JSON.stringify(this.peek())}`);
    return { expression, anchoredStart, anchoredEnd };
  }

  private peek(): string | undefined {
    return this.source[this.index];
  }

  private alternation(): string {
    const branches = [this.sequence()];
    while (this.peek() === "|") {
      this.index++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? branches[0]! : alternatives(branches.map((b) => (b === "" ? '""' : b)));
  }

  private sequence(): string {
    const items: string[] = [];
    for (;;) {
      const char = this.peek();
      if (char === undefined || char === "|" || char === ")") break;
      if (char === "$" && this.index === this.source.length - 1) break;
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return items.join(" ");
  }

  private quantified(atom: string): string {
    const char = this.peek();
    let min: number;
    let max: number | undefined;
    if (char === "*") [min, max] = [0, undefined];
    else if (char === "+") [min, max] = [1, undefined];
    else if (char === "?") [min, max] = [0, 1];
    else if (char === "{") {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.index));
      if (!match) return atom;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === "" ? undefined : Number(match[3]);
      this.index += match[0].length - 1;
    } else return atom;
    this.index++;
    if (this.peek() === "?" || this.peek() === "+") this.index++; // lazy and possessive forms match the same strings
    const grouped = /^(\(.*\)|\[.*\]|"[^"]*"|[a-z0-9-]+)$/.test(atom) && !atom.includes(" ") ? atom : `(${atom})`;
    return repeat(grouped, min, max);
  }

  private atom(): string {
    const char = this.peek()!;
    this.index++;
    switch (char) {
      case "(":
        return this.group();
      case "[":
        return this.set(this.classBody());
      case ".":
        return this.set({ ranges: [["\n", "\n"]], negated: true });
      case "\\":
        return this.escape();
      case "^":
      case "$":
        return this.fail("anchors are only supported at the start and end");
      case "*":
      case "+":
      case "?":
        return this.fail("nothing to repeat");
      default:
        return this.text(char);
    }
  }

  private group(): string {
    if (this.source.startsWith("?:", this.index)) this.index += 2;
    else if (this.source.startsWith("?<", this.index) && !/^\?<[=!]/.test(this.source.slice(this.index))) {
      const end = this.source.indexOf(">", this.index);
      if (end < 0) this.fail("unterminated group name");
      this.index = end + 1;
    } else if (this.peek() === "?") this.fail("lookarounds and inline flags are not supported");
    const inner = this.alternation();
    if (this.peek() !== ")") this.fail("missing )");
    this.index++;
    return `(${inner === "" ? '""' : inner})`;
  }

  private escape(): string {
    const char = this.peek();
    if (char === undefined) this.fail("trailing backslash");
    this.index++;
    const shorthand = this.shorthand(char);
    if (shorthand) return this.set(shorthand);
    if (/[1-9]/.test(char) || char === "k") this.fail("back-references are not supported");
    if (char === "b" || char === "B") this.fail("word boundaries are not supported");
    return this.text(this.escapedChar(char));
  }

  private shorthand(char: string): { ranges: Range[]; negated: boolean } | undefined {
    switch (char) {
      case "d": return { ranges: DIGIT, negated: false };
      case "D": return { ranges: DIGIT, negated: true };
      case "w": return { ranges: WORD, negated: false };
      case "W": return { ranges: WORD, negated: true };
      case "s": return { ranges: SPACE, negated: false };
      case "S": return { ranges: SPACE, negated: true };
      default: return undefined;
    }
  }

  /** The character an escape (after its backslash) stands for. */
  private escapedChar(char: string): string {
    const simple: Record<string, string> = { n: "\n", r: "\r", t: "\t", f: "\f", v: "\v", "0": "\0" };
    if (simple[char] !== undefined) return simple[char];
    if (char === "x" || char === "u") {
      const digits = char === "x" ? 2 : 4;
      const hex = this.source.slice(this.index, this.index + digits);
      if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) this.fail(`invalid \\${char} escape`);
      this.index += digits;
      return String.fromCodePoint(parseInt(hex, 16));
    }
    if (/[a-zA-Z]/.test(char)) this.fail(`unsupported escape \\${char}`);
    return char;
  }

  private classBody(): { ranges: Range[]; negated: boolean } {
    const negated = this.peek() === "^";
    if (negated) this.index++;
    const ranges: Range[] = [];
    let first = true;
    for (;;) {
      let char = this.peek();
      if (char === undefined) this.fail("missing ]");
      if (char === "]" && !first) break;
      first = false;
      this.index++;
      if (char === "\\") {
        const next = this.peek();
        if (next === undefined) this.fail("trailing backslash");
        this.index++;
        const shorthand = this.shorthand(next);
        if (shorthand) {
          if (shorthand.negated) this.fail(`\\${next} inside a class is not supported`);
          ranges.push(...shorthand.ranges);
          continue;
        }
        char = next === "b" ? "\b" : this.escapedChar(next);
      }
      if (this.peek() === "-" && this.source[this.index + 1] !== "]" && this.source[this.index + 1] !== undefined) {
        this.index++;
        let to = this.peek()!;
        this.index++;
        if (to === "\\") {
          const next = this.peek();
          if (next === undefined) this.fail("trailing backslash");
          this.index++;
          to = this.escapedChar(next);
        }
        if (to < char) this.fail("range out of order");
        ranges.push([char, to]);
      } else ranges.push([char, char]);
    }
    this.index++;
    return { ranges, negated };
  }

  /** A literal character, escaped as a JSON string needs when written inside one. */
  private text(char: string): string {
    if (this.target === "json-string") {
      const encoded = JSON.stringify(char).slice(1, -1);
      return literal(encoded);
    }
    return literal(char);
  }

  /** A set of characters; inside a JSON string, quotes, backslashes and control characters go escaped. */
  private set({ ranges, negated }: { ranges: Range[]; negated: boolean }): string {
    if (this.target === "text") return negated ? charClass([...ranges, ...MALFORMED], true, BEYOND_UNICODE) : charClass(ranges);
    if (negated) {
      const set = charClass([...ranges, ...JSON_RAW_EXCLUDED, ...MALFORMED], true, BEYOND_UNICODE);
      const escaped = ['"', "\\"].filter((c) => !ranges.some(([from, to]) => from <= c && c <= to)).map((c) => literal(JSON.stringify(c).slice(1, -1)));
      return escaped.length ? alternatives([set, ...escaped]) : set;
    }
    const parts: string[] = [];
    const plain = ranges.flatMap(([from, to]) => splitAroundExcluded(from, to));
    if (plain.length) parts.push(charClass(plain));
    for (const char of ['"', "\\"]) if (ranges.some(([from, to]) => from <= char && char <= to)) parts.push(literal(JSON.stringify(char).slice(1, -1)));
    for (const [from, to] of ranges) {
      for (let code = from.codePointAt(0)!; code <= Math.min(to.codePointAt(0)!, 0x1f); code++) parts.push(literal(JSON.stringify(String.fromCodePoint(code)).slice(1, -1)));
    }
    if (parts.length === 0) this.fail("the class matches no character a JSON string can hold");
    return alternatives(parts);
  }
}

/** A range with the characters a JSON string must escape cut out. */
function splitAroundExcluded(from: string, to: string): Range[] {
  let pieces: Range[] = [[from, to]];
  for (const [exFrom, exTo] of JSON_RAW_EXCLUDED) {
    pieces = pieces.flatMap(([a, b]) => {
      if (b < exFrom || a > exTo) return [[a, b] as Range];
      const out: Range[] = [];
      if (a < exFrom) out.push([a, String.fromCodePoint(exFrom.codePointAt(0)! - 1)]);
      if (b > exTo) out.push([String.fromCodePoint(exTo.codePointAt(0)! + 1), b]);
      return out;
    });
  }
  return pieces;
}

/**
 * The strings a regex matches, as a GBNF expression. `search` (JSON Schema's meaning of `pattern`) lets
 * any text stand before and after an unanchored pattern; otherwise the whole text must match (vLLM's).
 */
export function regexToGbnf(source: string, target: RegexTarget, options: { search?: boolean; anyChar?: string } = {}): string {
  checkRegexDepth(source);
  const { expression, anchoredStart, anchoredEnd } = new RegexReader(source, target).read();
  const body = expression === "" ? '""' : expression;
  if (!options.search) return `(${body})`;
  const any = options.anyChar ?? (target === "json-string" ? "json-char" : "[^\\x00]");
  return [anchoredStart ? "" : `${any}*`, `(${body})`, anchoredEnd ? "" : `${any}*`].filter(Boolean).join(" ");
}
