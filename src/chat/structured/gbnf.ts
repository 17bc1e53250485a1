// Pieces for writing GBNF (llama.cpp's grammar format): quoted literals, character classes, and a rule
// set that names rules once and reuses a rule whose body it has seen before.
import { StructuredOutputError } from "./errors.ts";
import { DEFAULT_GRAMMAR_LIMITS } from "./grammar-bounds.ts";

function escapeChar(char: string, specials: string): string {
  const code = char.codePointAt(0)!;
  if (char === "\n") return "\\n";
  if (char === "\r") return "\\r";
  if (char === "\t") return "\\t";
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code >= 0xd800 && code <= 0xdfff) return `\\u${code.toString(16)}`;
  if (code > 0xffff) return `\\U${code.toString(16).padStart(8, "0")}`;
  return specials.includes(char) ? `\\${char}` : char;
}

/** A GBNF string literal matching `text` exactly. */
export function literal(text: string): string {
  let out = '"';
  for (const char of text) out += escapeChar(char, '"\\');
  return `${out}"`;
}

/** One character or range inside a GBNF class, e.g. `a`, `\]`, `0-9`. */
export function classChar(char: string): string {
  return escapeChar(char, "]\\-^[");
}

/** A GBNF character class of ranges [from, to] (inclusive), negated when asked; `raw` is appended as written. */
export function charClass(ranges: Array<[string, string]>, negated = false, raw = ""): string {
  const body = ranges.map(([from, to]) => (from === to ? classChar(from) : `${classChar(from)}-${classChar(to)}`)).join("") + raw;
  return `[${negated ? "^" : ""}${body}]`;
}

/** `item{min,max}` in GBNF, written plainly for the common counts. */
export function repeat(item: string, min: number, max: number | undefined): string {
  if (max === 0) return '""';
  if (min === 0 && max === undefined) return `${item}*`;
  if (min === 1 && max === undefined) return `${item}+`;
  if (min === 0 && max === 1) return `${item}?`;
  if (min === 1 && max === 1) return item;
  if (max === undefined) return `${item}{${min},}`;
  return min === max ? `${item}{${min}}` : `${item}{${min},${max}}`;
}

/** `( a | b | … )`, or the one alternative alone. */
export function alternatives(items: string[]): string {
  const unique = [...new Set(items)];
  return unique.length === 1 ? unique[0]! : `(${unique.join(" | ")})`;
}

/** The rules of one grammar; `root` is the start rule. */
export class RuleSet {
  private readonly rules = new Map<string, string>();
  private readonly byBody = new Map<string, string>();
  /** The next numeric suffix to try per name, so that thousands of rules of one hint are named in linear time. */
  private readonly nextSuffix = new Map<string, number>();
  /** Characters written so far: writing stops once the grammar could no longer pass the bounds. */
  private chars = 0;

  private count(name: string, body: string): void {
    this.chars += name.length + body.length + 6;
    if (this.chars > DEFAULT_GRAMMAR_LIMITS.maxChars) {
      throw new StructuredOutputError(`Cannot use grammar: it is more than ${DEFAULT_GRAMMAR_LIMITS.maxChars} characters long`, "grammar");
    }
  }

  /** Adds a rule (or finds the rule with the same body) and returns its name. */
  add(nameHint: string, body: string): string {
    const existing = this.byBody.get(body);
    if (existing) return existing;
    const name = this.freeName(nameHint);
    this.count(name, body);
    this.rules.set(name, body);
    this.byBody.set(body, name);
    return name;
  }

  /** Reserves a name before its body is known (for recursive references); set it with `define`. */
  reserve(nameHint: string): string {
    const name = this.freeName(nameHint);
    this.rules.set(name, "");
    return name;
  }

  define(name: string, body: string): void {
    this.count(name, body);
    this.rules.set(name, body);
  }

  has(name: string): boolean {
    return this.rules.has(name);
  }

  private freeName(hint: string): string {
    const base = hint.replace(/[^a-zA-Z0-9-]+/g, "-").replace(/^-+|-+$/g, "").toLowerCase() || "rule";
    let name = base;
    let suffix = this.nextSuffix.get(base) ?? 2;
    while (this.rules.has(name) || name === "root") name = `${base}-${suffix++}`;
    this.nextSuffix.set(base, suffix);
    return name;
  }

  /** The grammar text with `root ::= rootBody` first. */
  toString(rootBody: string): string {
    const lines = [`root ::= ${rootBody}`];
    for (const [name, body] of this.rules) lines.push(`${name} ::= ${body}`);
    return `${lines.join("\n")}\n`;
  }
}
