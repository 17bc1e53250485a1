// Decimal numbers limited to a range, as GBNF: integers in [min, max] written without leading zeros, and
// numbers between integer bounds. Unbounded sides are capped at 15 digits so a random model cannot wander.
import { alternatives, repeat } from "./gbnf.ts";
import { StructuredOutputError } from "./errors.ts";

const MAX_DIGITS = 15;
const digitClass = (from: number, to: number) => (from === to ? `"${from}"` : from === 0 && to === 9 ? "[0-9]" : `[${from}-${to}]`);

/** Same-length digit strings from `low` to `high` (both of `low.length` digits, low <= high). */
function sameLength(low: string, high: string): string {
  if (low.length === 0) return '""';
  if (low === high) return `"${low}"`;
  const first = Number(low[0]);
  const last = Number(high[0]);
  const rest = low.length - 1;
  if (first === last) return `"${low[0]}" ${sameLength(low.slice(1), high.slice(1))}`.trim();
  const parts: string[] = [];
  const allLow = "0".repeat(rest);
  const allHigh = "9".repeat(rest);
  const tail = (digits: string, bound: string) => (rest === 0 ? digits : `${digits} ${bound}`);
  if (low.slice(1) === allLow && high.slice(1) === allHigh) return tail(digitClass(first, last), repeat("[0-9]", rest, rest));
  let from = first;
  let to = last;
  if (low.slice(1) !== allLow) {
    parts.push(tail(`"${first}"`, sameLength(low.slice(1), allHigh)));
    from++;
  }
  const highPart = high.slice(1) !== allHigh ? tail(`"${last}"`, sameLength(allLow, high.slice(1))) : undefined;
  if (highPart) to--;
  if (from <= to) parts.push(tail(digitClass(from, to), repeat("[0-9]", rest, rest)));
  if (highPart) parts.push(highPart);
  return alternatives(parts.map((p) => (p.includes(" ") && parts.length > 1 ? `(${p})` : p)));
}

/**
 * Non-negative integers in [low, high]; high undefined means up to MAX_DIGITS digits (or as many as
 * low has). A high bound past 2^53 counts as open; a low bound there cannot be written exactly and is
 * the schema's error.
 */
export function naturalRange(low: number, high: number | undefined): string {
  if (!Number.isSafeInteger(low)) {
    throw new StructuredOutputError(`Cannot enforce JSON schema: a numeric bound beyond ±${Number.MAX_SAFE_INTEGER} cannot be enforced`, "minimum");
  }
  if (high !== undefined && !Number.isSafeInteger(high)) high = undefined;
  if (high !== undefined && low > high) throw new StructuredOutputError(`Cannot enforce JSON schema: the range [${low}, ${high}] is empty`, "minimum");
  const parts: string[] = [];
  const lowText = String(low);
  const highText = high !== undefined ? String(high) : "9".repeat(Math.max(MAX_DIGITS, lowText.length));
  for (let length = lowText.length; length <= highText.length; length++) {
    const from = length === lowText.length ? lowText : length === 1 ? "0" : `1${"0".repeat(length - 1)}`;
    const to = length === highText.length ? highText : "9".repeat(length);
    parts.push(sameLength(from, to));
  }
  return alternatives(parts.map((p) => (p.includes(" ") && parts.length > 1 ? `(${p})` : p)));
}

/** Integers in [min, max]; either side may be open. */
export function integerRange(min: number | undefined, max: number | undefined): string {
  const parts: string[] = [];
  if (min === undefined || min < 0) {
    const magnitudeLow = max !== undefined && max < 0 ? -max : 1;
    parts.push(`"-" ${wrap(naturalRange(magnitudeLow, min === undefined ? undefined : -min))}`);
  }
  if (max === undefined || max >= 0) parts.push(naturalRange(Math.max(0, min ?? 0), max));
  return alternatives(parts.map((p) => (p.includes(" ") && parts.length > 1 ? `(${p})` : p)));
}

const wrap = (expression: string) => (expression.includes(" ") && !expression.startsWith("(") ? `(${expression})` : expression);

const FRACTION = `("." ${repeat("[0-9]", 1, 6)})?`;

/**
 * Magnitudes m with low <= m <= high (integers, high may be open): whole parts from low to high-1 take any
 * fraction, high itself takes none.
 */
function magnitudeRange(low: number, high: number | undefined): string[] {
  const parts: string[] = [];
  if (high === undefined || high - 1 >= low) parts.push(`${wrap(naturalRange(low, high === undefined ? undefined : high - 1))} ${FRACTION}`);
  if (high !== undefined) parts.push(`"${high}"`);
  return parts;
}

/** Numbers (with up to 6 fraction digits) in [min, max], where the bounds are integers. */
export function numberRange(min: number | undefined, max: number | undefined): string {
  const parts: string[] = [];
  if (min === undefined || min < 0) {
    const magnitudes = magnitudeRange(max !== undefined && max < 0 ? -max : 0, min === undefined ? undefined : -min);
    parts.push(`"-" ${alternatives(magnitudes.map(wrap))}`);
  }
  if (max === undefined || max >= 0) parts.push(...magnitudeRange(Math.max(0, min ?? 0), max));
  return alternatives(parts.map(wrap));
}

/** Any JSON number, with bounded digit counts. */
export const ANY_NUMBER = `"-"? ([0-9] | [1-9] ${repeat("[0-9]", 1, MAX_DIGITS - 1)}) ${FRACTION} ([eE] [-+]? ${repeat("[0-9]", 1, 2)})?`;
