// One check of a parameter's value against its row: the type, then the range. Each surface words the
// failure its own way around the same facts (the field it read and what the value must be).
import { OPTIONS, type OptionKey, type OptionKind, type OptionRange } from "./table.ts";

/** A parameter value a request (or model) sets that its row does not allow. */
export class OptionError extends RangeError {
  /** The field as the caller named it (`options.top_k`, `xtc_probability`, `llm.prediction.seed`). */
  readonly field: string;
  /** What the value must be, e.g. "a number in [0, 1]". */
  readonly rule: string;
  constructor(field: string, rule: string, message = `Invalid value for "${field}": expected ${rule}`) {
    super(message);
    this.name = "OptionError";
    this.field = field;
    this.rule = rule;
  }
}

const KIND_WORDS: Record<OptionKind, string> = { int: "an integer", float: "a number", bool: "a boolean", strings: "an array of strings", ints: "an array of integers", bias: "an object of token ids to numbers" };

/** "in (0, 1]", "at least -1", "1 to 32 entries, each 1 to 40 characters" (empty without a range). */
export function rangeWords(range: OptionRange | undefined, kind: OptionKind): string {
  if (!range) return "";
  if (kind === "strings") {
    const count = range.maxItems !== undefined ? `${range.min ?? 0} to ${range.maxItems} entries` : "";
    const length = range.maxItemLength !== undefined ? `each 1 to ${range.maxItemLength} characters` : "";
    return [count, length].filter(Boolean).join(", ");
  }
  const { min, max, aboveMin } = range;
  if (min !== undefined && max !== undefined) return `in ${aboveMin ? "(" : "["}${min}, ${max}]`;
  if (min !== undefined) return aboveMin ? `greater than ${min}` : `at least ${min}`;
  if (max !== undefined) return `at most ${max}`;
  return "";
}

/** What a value of this row must be, in words. */
export function ruleOf(key: OptionKey, withRange = true): string {
  const row = OPTIONS[key];
  const range = withRange && "range" in row ? rangeWords(row.range, row.kind) : "";
  if (!range) return KIND_WORDS[row.kind];
  return row.kind === "strings" ? `${KIND_WORDS[row.kind]} (${range})` : `${KIND_WORDS[row.kind]} ${range}`;
}

/** The value has the row's type (its range aside). */
export function checkKind(key: OptionKey, value: unknown): boolean {
  return hasKind(value, OPTIONS[key].kind);
}

function hasKind(value: unknown, kind: OptionKind): boolean {
  switch (kind) {
    case "int":
      return typeof value === "number" && Number.isFinite(value);
    case "float":
      return typeof value === "number" && Number.isFinite(value);
    case "bool":
      return typeof value === "boolean";
    case "strings":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "ints":
      return Array.isArray(value) && value.every((item) => Number.isInteger(item));
    case "bias":
      return typeof value === "object" && value !== null && !Array.isArray(value)
        && Object.entries(value).every(([token, bias]) => /^\d+$/.test(token) && typeof bias === "number" && Number.isFinite(bias));
  }
}

function inRange(value: unknown, range: OptionRange, kind: OptionKind): boolean {
  const numbers = kind === "ints" ? (value as number[]) : typeof value === "number" ? [value] : [];
  for (const n of numbers) {
    if (range.min !== undefined && (range.aboveMin ? n <= range.min : n < range.min)) return false;
    if (range.max !== undefined && n > range.max) return false;
  }
  if (kind === "strings") {
    const list = value as string[];
    if (range.min !== undefined && list.length < range.min) return false;
    if (range.maxItems !== undefined && list.length > range.maxItems) return false;
    if (range.maxItemLength !== undefined && list.some((item) => item.length === 0 || item.length > range.maxItemLength!)) return false;
  }
  return true;
}

/**
 * The value, checked: its type, and its range unless `typeOnly`. An "int" value keeps only its whole
 * part when `truncate` is set (Ollama reads a JSON number into a Go int); otherwise a fraction is an error.
 */
export function checkOption(key: OptionKey, value: unknown, field: string, how: { typeOnly?: boolean; truncate?: boolean } = {}): unknown {
  const row = OPTIONS[key];
  if (!hasKind(value, row.kind)) throw new OptionError(field, ruleOf(key, !how.typeOnly));
  let checked = value;
  if (row.kind === "int") {
    if (how.truncate) checked = Math.trunc(value as number);
    else if (!Number.isInteger(value)) throw new OptionError(field, ruleOf(key, !how.typeOnly));
  }
  if (!how.typeOnly && "range" in row && !inRange(checked, row.range, row.kind)) throw new OptionError(field, ruleOf(key));
  return checked;
}
