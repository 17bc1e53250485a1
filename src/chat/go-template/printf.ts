// fmt.Sprintf for templates: the common verbs (%v %s %q %d %f %e %g %x %X %o %b %t %c %T %%) with
// flags, width and precision, and Go's %!verb(type=value) marks for mismatched or missing arguments.
import { formatNumber, formatValue, typeName } from "./values.ts";

const MAX_WIDTH = 1e6;
const DIRECTIVE = /%([-+# 0]*)(\*|\d+)?(?:\.(\*|\d*))?(.)?/y;

/** strconv.Quote: a double-quoted Go string literal. */
export function goQuote(text: string): string {
  return JSON.stringify(text)
    .replace(/\\u00([0-7][0-9a-f])/g, (_, hex: string) => ({ "07": "\\a", "0b": "\\v" })[hex] ?? `\\x${hex}`)
    .replace(/\x7f/g, "\\x7f");
}

export function sprintf(format: string, args: unknown[]): string {
  let out = "";
  let argIndex = 0;
  let pos = 0;
  while (pos < format.length) {
    const percent = format.indexOf("%", pos);
    if (percent < 0) {
      out += format.slice(pos);
      break;
    }
    out += format.slice(pos, percent);
    DIRECTIVE.lastIndex = percent;
    const match = DIRECTIVE.exec(format)!;
    pos = DIRECTIVE.lastIndex;
    const [, flags = "", widthText, precisionText, verb] = match;
    if (verb === undefined) {
      out += "%!(NOVERB)";
      break;
    }
    if (verb === "%") {
      out += "%";
      continue;
    }
    const starArg = (text: string | undefined) => (text === "*" ? Number(args[argIndex++]) : text === undefined || text === "" ? undefined : Number(text));
    let width = starArg(widthText);
    let precision = precisionText === undefined ? undefined : (starArg(precisionText) ?? 0);
    // As Go's fmt: a width or precision beyond a million is refused in the output, not honoured.
    if (width !== undefined && !(Math.abs(width) <= MAX_WIDTH)) {
      out += "%!(BADWIDTH)";
      width = undefined;
    }
    if (precision !== undefined && !(Math.abs(precision) <= MAX_WIDTH)) {
      out += "%!(BADPREC)";
      precision = undefined;
    }
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const formatted = formatOne(verb, args[argIndex++], flags, precision);
    out += pad(formatted, width, flags, verb);
  }
  if (argIndex < args.length) {
    out += `%!(EXTRA ${args.slice(argIndex).map((arg) => `${typeName(arg)}=${formatValue(arg)}`).join(", ")})`;
  }
  return out;
}

function pad(text: string, width: number | undefined, flags: string, verb: string): string {
  if (width === undefined || text.length >= width) return text;
  if (flags.includes("-")) return text.padEnd(width);
  if (flags.includes("0") && "dfeEgGxXob".includes(verb)) {
    const sign = /^[+-]/.test(text) ? text[0]! : "";
    return sign + text.slice(sign.length).padStart(width - sign.length, "0");
  }
  return text.padStart(width);
}

function badVerb(verb: string, value: unknown): string {
  return `%!${verb}(${typeName(value)}=${formatValue(value)})`;
}

function signed(text: string, value: number, flags: string): string {
  if (value < 0 || Object.is(value, -0)) return text;
  return flags.includes("+") ? `+${text}` : flags.includes(" ") ? ` ${text}` : text;
}

function formatOne(verb: string, value: unknown, flags: string, precision: number | undefined): string {
  switch (verb) {
    case "v":
      if (flags.includes("#") && typeof value === "string") return goQuote(value);
      return typeof value === "number" ? signed(formatNumber(value), value, flags) : formatValue(value);
    case "s": {
      if (typeof value === "number" || typeof value === "boolean") return badVerb(verb, value);
      const text = formatValue(value);
      return precision === undefined ? text : [...text].slice(0, precision).join("");
    }
    case "q":
      if (typeof value === "string") return goQuote(value);
      if (typeof value === "number" && Number.isInteger(value)) return `'${String.fromCodePoint(value)}'`;
      return badVerb(verb, value);
    case "T":
      return typeName(value);
    case "t":
      return typeof value === "boolean" ? String(value) : badVerb(verb, value);
    case "c":
      return typeof value === "number" && Number.isInteger(value) ? String.fromCodePoint(value) : badVerb(verb, value);
    case "d":
    case "o":
    case "b":
    case "x":
    case "X":
      return integerVerb(verb, value, flags);
    case "f":
    case "F":
    case "e":
    case "E":
    case "g":
    case "G":
      if (typeof value !== "number") return badVerb(verb, value);
      return signed(floatVerb(verb, value, precision), value, flags);
    default:
      return badVerb(verb, value);
  }
}

function integerVerb(verb: string, value: unknown, flags: string): string {
  if ((verb === "x" || verb === "X") && typeof value === "string") {
    const hex = Array.from(new TextEncoder().encode(value), (byte) => byte.toString(16).padStart(2, "0")).join("");
    return verb === "X" ? hex.toUpperCase() : hex;
  }
  if (typeof value !== "number" || !Number.isInteger(value)) return badVerb(verb, value);
  const radix = { d: 10, o: 8, b: 2, x: 16, X: 16 }[verb]!;
  let digits = Math.abs(value).toString(radix);
  if (verb === "X") digits = digits.toUpperCase();
  if (flags.includes("#")) digits = ({ o: "0", x: "0x", X: "0X", b: "" }[verb] ?? "") + digits;
  return signed(value < 0 ? `-${digits}` : digits, value, flags);
}

function floatVerb(verb: string, value: number, precision: number | undefined): string {
  const upper = verb === "E" || verb === "G";
  let text: string;
  if (verb === "f" || verb === "F") text = value.toFixed(precision ?? 6);
  else if (verb === "e" || verb === "E") text = value.toExponential(precision ?? 6);
  else text = precision === undefined ? formatNumber(value) : goG(value, precision);
  text = text.replace(/e([+-])(\d)$/, "e$10$2");
  return upper ? text.toUpperCase() : text;
}

/** %.Ng: N significant digits, exponent form when the exponent is below -4 or at least N. */
function goG(value: number, precision: number): string {
  const digits = Math.max(precision, 1);
  const exponent = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  if (exponent < -4 || exponent >= digits) return value.toExponential(digits - 1).replace(/\.?0+e/, "e");
  return String(Number(value.toPrecision(digits)));
}
