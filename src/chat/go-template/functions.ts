// The functions a template can call: text/template's builtins and the ones Ollama adds (json,
// currentDate, yesterdayDate, toTypeScriptType). `and`, `or` and `call` are in the executor, since
// they need unevaluated arguments or a function value.
import { TemplateValueError } from "./errors.ts";
import { sprintf } from "./printf.ts";
import {
  byteAt, byteLength, fieldOf, formatValue, goEquals, goLess, isGoStruct, isMap, isTrue, sliceBytes, toGoJson, typeName,
} from "./values.ts";

export type TemplateFunction = (...args: unknown[]) => unknown;

function arity(name: string, args: unknown[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw new TemplateValueError(`wrong number of args for ${name}: want ${wanted} got ${args.length}`);
  }
}

/** fmt.Sprint: a space between operands when neither side is a string. */
function sprint(args: unknown[]): string {
  let out = "";
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== "string" && typeof args[i - 1] !== "string") out += " ";
    out += formatValue(arg);
  });
  return out;
}

function toInteger(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value)) throw new TemplateValueError(`cannot index slice/array with type ${typeName(value)}`);
  return value;
}

function index(item: unknown, ...keys: unknown[]): unknown {
  let current = item;
  for (const key of keys) {
    if (current === undefined || current === null) throw new TemplateValueError("index of untyped nil");
    if (Array.isArray(current) || typeof current === "string") {
      const i = toInteger(key);
      const length = Array.isArray(current) ? current.length : byteLength(current);
      if (i < 0 || i >= length) throw new TemplateValueError(`error calling index: index out of range: ${i}`);
      current = Array.isArray(current) ? current[i] : byteAt(current, i);
    } else if (isMap(current)) {
      current = Object.hasOwn(current, String(key)) ? current[String(key)] : undefined;
    } else throw new TemplateValueError(`can't index item of type ${typeName(current)}`);
  }
  return current;
}

function slice(item: unknown, ...bounds: unknown[]): unknown {
  if (typeof item !== "string" && !Array.isArray(item)) throw new TemplateValueError(`can't slice item of type ${typeName(item)}`);
  if (bounds.length > 3 || (typeof item === "string" && bounds.length > 2)) throw new TemplateValueError("too many slice indexes");
  const length = typeof item === "string" ? byteLength(item) : item.length;
  const [start = 0, end = length] = bounds.map((bound) => toInteger(bound));
  if (start > end) throw new TemplateValueError(`error calling slice: invalid slice index: ${start} > ${end}`);
  if (start < 0 || end > length) throw new TemplateValueError(`error calling slice: index out of range: ${start < 0 ? start : end}`);
  return typeof item === "string" ? sliceBytes(item, start, end) : item.slice(start, end);
}

function len(item: unknown): number {
  if (typeof item === "string") return byteLength(item);
  if (Array.isArray(item)) return item.length;
  if (isMap(item)) return Object.keys(item).length;
  throw new TemplateValueError(`error calling len: len of type ${typeName(item)}`);
}

function localDate(daysAgo: number): string {
  const date = new Date(Date.now() - daysAgo * 86_400_000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`;
}

const TS_TYPES: Record<string, string> = { string: "string", number: "number", integer: "number", boolean: "boolean", null: "null", object: "object" };

/** A tool property's JSON-schema type as a TypeScript type (Ollama's toTypeScriptType). */
function toTypeScriptType(property: unknown): string {
  if (property === undefined || property === null) return "any";
  const get = (name: string) => (isGoStruct(property) || isMap(property) ? fieldOf(property, name) : undefined);
  const enumValues = get("Enum");
  if (Array.isArray(enumValues) && enumValues.length > 0) return enumValues.map((value) => toGoJson(value)).join(" | ");
  const typeValue = get("Type");
  const types = Array.isArray(typeValue) ? typeValue : isGoStruct(typeValue) ? (typeValue.names as string[]) : typeof typeValue === "string" ? [typeValue] : [];
  const names = types.map((type) => (type === "array" ? `${get("Items") ? toTypeScriptType(get("Items")) : "any"}[]` : TS_TYPES[type] ?? "any"));
  return names.length > 0 ? names.join(" | ") : "any";
}

const htmlEscapes: Record<string, string> = { '"': "&#34;", "'": "&#39;", "&": "&amp;", "<": "&lt;", ">": "&gt;", "\0": "\uFFFD" };

export const BUILTIN_FUNCTIONS: Readonly<Record<string, TemplateFunction>> = {
  not: (...args) => (arity("not", args, 1), !isTrue(args[0])),
  len: (...args) => (arity("len", args, 1), len(args[0])),
  index: (...args) => (arity("index", args, 1, Infinity), index(args[0], ...args.slice(1))),
  slice: (...args) => (arity("slice", args, 1, Infinity), slice(args[0], ...args.slice(1))),
  eq: (...args) => (arity("eq", args, 2, Infinity), args.slice(1).some((arg) => goEquals(args[0], arg))),
  ne: (...args) => (arity("ne", args, 2), !goEquals(args[0], args[1])),
  lt: (...args) => (arity("lt", args, 2), goLess(args[0], args[1])),
  le: (...args) => (arity("le", args, 2), goLess(args[0], args[1]) || goEquals(args[0], args[1])),
  gt: (...args) => (arity("gt", args, 2), goLess(args[1], args[0])),
  ge: (...args) => (arity("ge", args, 2), goLess(args[1], args[0]) || goEquals(args[0], args[1])),
  print: (...args) => sprint(args),
  println: (...args) => `${args.map(formatValue).join(" ")}\n`,
  printf: (...args) => {
    arity("printf", args, 1, Infinity);
    if (typeof args[0] !== "string") throw new TemplateValueError(`printf needs a format string, not ${typeName(args[0])}`);
    return sprintf(args[0], args.slice(1));
  },
  html: (...args) => sprint(args).replace(/["'&<>\0]/g, (ch) => htmlEscapes[ch]!),
  js: (...args) =>
    sprint(args).replace(/[\\'"<>&=\u0000-\u001f]/g, (ch) =>
      ch === "\\" || ch === "'" || ch === '"' ? `\\${ch}` : `\\u${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`,
    ),
  urlquery: (...args) =>
    encodeURIComponent(sprint(args)).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, "+"),
  json: (...args) => (arity("json", args, 1), toGoJson(args[0])),
  currentDate: () => localDate(0),
  yesterdayDate: () => localDate(1),
  toTypeScriptType: (...args) => (arity("toTypeScriptType", args, 1), toTypeScriptType(args[0])),
};
