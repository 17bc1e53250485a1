// Numbers that are multiples of a JSON schema's `multipleOf`, within the schema's bounds, as GBNF. Each
// case admits only valid values, some only a subset of them:
// - a step that divides 1 (0.5, 0.25, 0.01, 1): any whole part in range with the step's fraction digits;
// - a whole step that divides a power of ten (2, 5, 25, 100): a whole prefix and the step's last digits;
// - any other step (3, 7, 1.5): the 256 multiples in range nearest to zero, written out.
import { alternatives, literal } from "./gbnf.ts";
import { choiceGrammar } from "./choice-grammar.ts";
import { boundedNumber, integerRange, naturalRange, type FractionGrammar, type NumberBound } from "./number-range.ts";
import { StructuredOutputError } from "./errors.ts";

const LISTED = 256;
const MAX_DECIMALS = 6;
/** Significant digits a JSON number keeps through a double: larger multiples would not parse as multiples. */
const SAFE_DIGITS = 15;

/** `step` as `units / 10^decimals` with whole units, when it has at most MAX_DECIMALS decimals. */
function decimalParts(step: number): { units: number; decimals: number } | undefined {
  for (let decimals = 0; decimals <= MAX_DECIMALS; decimals++) {
    const units = Math.round(step * 10 ** decimals);
    if (Math.abs(units / 10 ** decimals - step) <= Number.EPSILON * Math.max(1, step) * 4) return { units, decimals };
  }
  return undefined;
}

/** The number `units / 10^decimals` as JSON text. */
function decimalText(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** The range as whole multiples n of the step: n * step within the bounds. */
function multiplesRange(units: number, decimals: number, min?: NumberBound, max?: NumberBound): { low?: bigint; high?: bigint } {
  const scale = 10 ** decimals;
  const range: { low?: bigint; high?: bigint } = {};
  if (min !== undefined) {
    const n = Math.ceil((min.value * scale) / units - 1e-9);
    range.low = BigInt(min.exclusive && Math.abs(n * units - min.value * scale) < 1e-6 ? n + 1 : n);
  }
  if (max !== undefined) {
    const n = Math.floor((max.value * scale) / units + 1e-9);
    range.high = BigInt(max.exclusive && Math.abs(n * units - max.value * scale) < 1e-6 ? n - 1 : n);
  }
  return range;
}

/** Up to LISTED multiples within the range, those nearest to zero first. */
function listedMultiples(units: number, decimals: number, range: { low?: bigint; high?: bigint }, path: string): string {
  const inRange = (n: bigint) => (range.low === undefined || n >= range.low) && (range.high === undefined || n <= range.high);
  const start = range.low !== undefined && range.low > 0n ? range.low : range.high !== undefined && range.high < 0n ? range.high : 0n;
  const values: bigint[] = [];
  for (let offset = 0n; values.length < LISTED && offset <= BigInt(LISTED); offset++) {
    for (const n of offset === 0n ? [start] : [start + offset, start - offset]) if (inRange(n) && values.length < LISTED) values.push(n);
  }
  if (values.length === 0) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no multiple of its multipleOf between its bounds`, "multipleOf");
  values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // as a prefix tree: a flat list of 256 would pass the grammar's bound on one alternation
  return choiceGrammar(values.map((n) => decimalText(n * BigInt(units), decimals)));
}

/** The fraction digits of multiples of a step that divides 1 (1/step fractions), e.g. .25 .5 .75. */
function stepFractions(units: number, decimals: number): FractionGrammar {
  const perWhole = 10 ** decimals / units;
  if (units === 1) {
    // 0.1, 0.01, ...: any digits up to the step's last one.
    const digits = decimals === 1 ? "[0-9]" : `[0-9]{1,${decimals}}`;
    const leading = decimals === 1 ? "" : `[0-9]{0,${decimals - 1}} `;
    return { any: `("." ${digits})?`, nonZero: `"." ${leading}[1-9]` };
  }
  const fractions: string[] = [];
  for (let i = 1; i < perWhole; i++) fractions.push(literal(decimalText(BigInt(i * units), decimals).slice(1)));
  const listed = alternatives(fractions);
  return { any: `${listed}?`, nonZero: listed };
}

/** A whole step dividing 10^digits: the last `digits` digits, zero-padded, that are multiples of it. */
function stepEndings(units: number, digits: number): string[] {
  const endings: string[] = [];
  for (let n = 0; n < 10 ** digits; n += units) endings.push(String(n).padStart(digits, "0"));
  return endings;
}

/** Magnitudes in [low, high] (whole, high may be open) that are multiples of a step dividing 10^digits. */
function wholeMultiples(units: number, digits: number, low: number, high: number | undefined): string[] {
  const block = 10 ** digits;
  const parts: string[] = [];
  const small: string[] = [];
  for (let n = Math.ceil(low / units) * units; n < block && (high === undefined || n <= high); n += units) small.push(`"${n}"`);
  if (small.length) parts.push(alternatives(small));
  // Longer ones: a prefix P >= 1 followed by an ending, all of the block P * 10^digits inside the range.
  const firstPrefix = Math.max(1, Math.ceil(low / block));
  const top = Math.min(high ?? Infinity, 10 ** SAFE_DIGITS - 1);
  const lastPrefix = Math.floor((top + 1) / block) - 1;
  if (lastPrefix >= firstPrefix) {
    const prefix = naturalRange(firstPrefix, lastPrefix);
    parts.push(`${prefix.includes(" ") ? `(${prefix})` : prefix} ${alternatives(stepEndings(units, digits).map((e) => `"${e}"`))}`);
  }
  return parts;
}

/** Whole multiples of `units` (dividing 10^digits) within the bounds, by sign. */
function wholeMultiplesInRange(units: number, digits: number, range: { low?: bigint; high?: bigint }): string | undefined {
  const low = range.low === undefined ? undefined : Number(range.low) * units;
  const high = range.high === undefined ? undefined : Number(range.high) * units;
  const parts: string[] = [];
  if (low === undefined || low < 0) {
    const magnitudes = wholeMultiples(units, digits, high !== undefined && high < 0 ? -high : units, low === undefined ? undefined : -low);
    if (magnitudes.length) parts.push(`"-" ${alternatives(magnitudes.map((m) => (m.includes(" ") ? `(${m})` : m)))}`);
  }
  if (high === undefined || high >= 0) parts.push(...wholeMultiples(units, digits, Math.max(0, low ?? 0), high));
  if (parts.length === 0) return undefined;
  return alternatives(parts.map((p) => (p.includes(" ") ? `(${p})` : p)));
}

/** The grammar of numbers that are multiples of `step` within the bounds. */
export function multipleOfGrammar(step: unknown, min: NumberBound | undefined, max: NumberBound | undefined, path: string): string {
  if (typeof step !== "number" || !Number.isFinite(step) || step <= 0) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.multipleOf must be a number above 0`, "multipleOf");
  const parts = decimalParts(step);
  if (!parts || parts.units > 1e9) throw new StructuredOutputError(`Unsupported JSON schema keyword "multipleOf" at ${path}: only steps with at most ${MAX_DECIMALS} decimals can be enforced`, "multipleOf");
  const { units, decimals } = parts;
  const range = multiplesRange(units, decimals, min, max);
  if (range.low !== undefined && range.high !== undefined) {
    if (range.high < range.low) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no multiple of its multipleOf between its bounds`, "multipleOf");
    if (range.high - range.low < BigInt(LISTED)) return listedMultiples(units, decimals, range, path);
  }
  if (decimals > 0 && (10 ** decimals) % units === 0) {
    // Whole parts short enough that the fraction survives the double a client parses it into.
    const limit = 10 ** (SAFE_DIGITS - decimals) - 1;
    const low = min !== undefined && min.value > -limit ? min : { value: -limit, exclusive: false };
    const high = max !== undefined && max.value < limit ? max : { value: limit, exclusive: false };
    return boundedNumber(low, high, stepFractions(units, decimals));
  }
  if (decimals === 0) {
    const digits = [1, 2, 3].find((d) => (10 ** d) % units === 0);
    if (units === 1) return integerRange(range.low === undefined ? undefined : Number(range.low), range.high === undefined ? undefined : Number(range.high));
    const whole = digits === undefined ? undefined : wholeMultiplesInRange(units, digits, range);
    if (whole) return whole;
  }
  return listedMultiples(units, decimals, range, path);
}

/** The step of integers that are multiples of `step` (the least common multiple of `step` and 1). */
export function integerStep(step: unknown, path: string): number {
  if (typeof step !== "number" || !Number.isFinite(step) || step <= 0) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.multipleOf must be a number above 0`, "multipleOf");
  const parts = decimalParts(step);
  if (!parts) throw new StructuredOutputError(`Unsupported JSON schema keyword "multipleOf" at ${path}: only steps with at most ${MAX_DECIMALS} decimals can be enforced`, "multipleOf");
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  return parts.units / gcd(parts.units, 10 ** parts.decimals);
}
