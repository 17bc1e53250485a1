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
  // Lengths whose every value is in range (10…0 to 99…9) merge into one [1-9] [0-9]{a,b}: the same
  // numbers as one alternative per length, but the grammar keeps two stacks per digit instead of one
  // per length still possible (an unbounded integer would otherwise carry 15).
  let wholeFrom: number | undefined;
  const flushWhole = (through: number) => {
    if (wholeFrom === undefined) return;
    parts.push(`[1-9] ${repeat("[0-9]", wholeFrom - 1, through - 1)}`.trim());
    wholeFrom = undefined;
  };
  for (let length = lowText.length; length <= highText.length; length++) {
    const from = length === lowText.length ? lowText : length === 1 ? "0" : `1${"0".repeat(length - 1)}`;
    const to = length === highText.length ? highText : "9".repeat(length);
    if (length > 1 && from === `1${"0".repeat(length - 1)}` && to === "9".repeat(length)) {
      wholeFrom ??= length;
      continue;
    }
    flushWhole(length - 1);
    parts.push(sameLength(from, to));
  }
  flushWhole(highText.length);
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
const NONZERO_FRACTION = `"." ${repeat("[0-9]", 0, 5)} [1-9]`;

/** A bound of a number range; `exclusive` leaves the value itself out. */
export interface NumberBound {
  value: number;
  exclusive: boolean;
}

/** The fraction digits a number may have: any (up to 6), or those of a multipleOf. */
export interface FractionGrammar {
  /** An optional fraction part (the empty string allowed). */
  any: string;
  /** A fraction part that is not zero. */
  nonZero: string;
}

export const ANY_FRACTION: FractionGrammar = { any: FRACTION, nonZero: NONZERO_FRACTION };

/** Bounds that are not whole numbers move inward to the next whole number, inclusive (a subset of the range). */
function wholeBound(bound: NumberBound | undefined, side: "min" | "max"): NumberBound | undefined {
  if (bound === undefined || Number.isInteger(bound.value)) return bound;
  return { value: side === "min" ? Math.ceil(bound.value) : Math.floor(bound.value), exclusive: false };
}

/** Magnitudes m with low <(=) m <(=) high, for whole low and high (high may be open). */
function magnitudeRange(low: number, lowExclusive: boolean, high: number | undefined, highExclusive: boolean, fraction: FractionGrammar): string[] {
  if (high !== undefined && (high < low || (high === low && (lowExclusive || highExclusive)))) return [];
  const parts: string[] = [];
  if (lowExclusive && (high === undefined || high > low)) parts.push(`"${low}" ${wrap(fraction.nonZero)}`);
  const firstWhole = lowExclusive ? low + 1 : low;
  if (high === undefined) parts.push(`${wrap(naturalRange(firstWhole, undefined))} ${fraction.any}`);
  else {
    if (high - 1 >= firstWhole) parts.push(`${wrap(naturalRange(firstWhole, high - 1))} ${fraction.any}`);
    if (!highExclusive && high >= firstWhole) parts.push(`"${high}"`);
  }
  return parts;
}

/**
 * Numbers in a range (either side open, bounds inclusive or exclusive), with the fraction digits
 * `fraction` allows. Bounds that are not whole numbers are moved inward to whole ones.
 */
export function boundedNumber(minBound: NumberBound | undefined, maxBound: NumberBound | undefined, fraction: FractionGrammar = ANY_FRACTION): string {
  const min = wholeBound(minBound, "min");
  const max = wholeBound(maxBound, "max");
  const parts: string[] = [];
  if (min === undefined || min.value < 0) {
    // Negative values: magnitudes above -max (or above 0) up to -min.
    const low = max !== undefined && max.value < 0 ? { value: -max.value, exclusive: max.exclusive } : { value: 0, exclusive: true };
    const magnitudes = magnitudeRange(low.value, low.exclusive, min === undefined ? undefined : -min.value, min?.exclusive ?? false, fraction);
    if (magnitudes.length) parts.push(`"-" ${alternatives(magnitudes.map(wrap))}`);
  }
  if (max === undefined || max.value >= 0) {
    const low = min !== undefined && min.value >= 0 ? min : { value: 0, exclusive: false };
    parts.push(...magnitudeRange(low.value, low.exclusive, max?.value, max?.exclusive ?? false, fraction));
  }
  if (parts.length === 0) throw new RangeError("empty number range");
  return alternatives(parts.map(wrap));
}

/** Numbers (with up to 6 fraction digits) in [min, max], where the bounds are integers. */
export function numberRange(min: number | undefined, max: number | undefined): string {
  return boundedNumber(min === undefined ? undefined : { value: min, exclusive: false }, max === undefined ? undefined : { value: max, exclusive: false });
}

/** Any JSON number, with bounded digit counts. */
export const ANY_NUMBER = `"-"? ([0-9] | [1-9] ${repeat("[0-9]", 1, MAX_DIGITS - 1)}) ${FRACTION} ([eE] [-+]? ${repeat("[0-9]", 1, 2)})?`;
