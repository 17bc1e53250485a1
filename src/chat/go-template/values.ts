// How JavaScript values behave as Go values inside a template: structs (named fields, an optional
// String method, a JSON form), maps (plain objects), truth, printing as fmt's %v does, and JSON as
// encoding/json writes it.
import { TemplateValueError } from "./errors.ts";

const GO_TYPE = Symbol("goType");

/** A Go struct: its fields are exact, unknown ones are an error, and it may define String() and its JSON. */
export interface GoStruct {
  readonly [GO_TYPE]: string;
  [field: string]: unknown;
}

export interface GoStructOptions {
  /** What printing the value shows (Go's Stringer); also callable from a template as .String. */
  string?: () => string;
  /** What `json` writes for it (encoding/json of the Go type). */
  json?: () => unknown;
}

export function goStruct(typeName: string, fields: Record<string, unknown>, options: GoStructOptions = {}): GoStruct {
  const value = { ...fields } as GoStruct;
  Object.defineProperty(value, GO_TYPE, { value: typeName });
  return withMethods(value, options);
}

/**
 * Gives a map or slice a String method and a JSON form (as Go named types such as Ollama's
 * ToolCallFunctionArguments have), without changing its keys or elements.
 */
export function withMethods<T extends object>(value: T, options: GoStructOptions): T {
  if (options.string) Object.defineProperty(value, "String", { value: options.string });
  if (options.json) Object.defineProperty(value, "toJSON", { value: options.json });
  return value;
}

function stringerOf(value: object): (() => unknown) | undefined {
  const method = Object.getOwnPropertyDescriptor(value, "String")?.value;
  return typeof method === "function" ? method : undefined;
}

export function isGoStruct(value: unknown): value is GoStruct {
  return typeof value === "object" && value !== null && GO_TYPE in value;
}

export function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !isGoStruct(value);
}

/** Go's type name for messages: "string", "[]interface {}", "api.Message", … */
export function typeName(value: unknown): string {
  if (value === undefined || value === null) return "nil";
  if (isGoStruct(value)) return value[GO_TYPE];
  if (Array.isArray(value)) return "[]interface {}";
  if (typeof value === "object") return "map[string]interface {}";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float64";
  if (typeof value === "function") return "func";
  return typeof value === "boolean" ? "bool" : "string";
}

/** Go's truth: false, 0, "", nil and empty slices or maps are false; structs are always true. */
export function isTrue(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isGoStruct(value)) return true;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return Boolean(value);
}

/** A field of a struct or a key of a map; a missing map key is "no value" (Ollama's missingkey=zero). */
export function fieldOf(receiver: unknown, name: string): unknown {
  if (receiver === undefined || receiver === null) throw new TemplateValueError(`nil pointer evaluating interface {}.${name}`);
  if (isGoStruct(receiver)) {
    if (Object.hasOwn(receiver, name) || name === "String") return receiver[name];
    throw new TemplateValueError(`can't evaluate field ${name} in type ${receiver[GO_TYPE]}`);
  }
  if (isMap(receiver)) return Object.hasOwn(receiver, name) ? receiver[name] : undefined;
  if (Array.isArray(receiver) && name === "String" && stringerOf(receiver)) return stringerOf(receiver);
  throw new TemplateValueError(`can't evaluate field ${name} in type ${typeName(receiver)}`);
}

/** fmt's %v. */
export function formatValue(value: unknown): string {
  if (value === undefined) return "<no value>";
  if (value === null) return "<nil>";
  if (typeof value === "string") return value;
  if (typeof value === "number") return formatNumber(value);
  if (typeof value === "boolean") return String(value);
  const stringer = typeof value === "object" ? stringerOf(value) : undefined;
  if (stringer) return String(stringer.call(value));
  if (Array.isArray(value)) return `[${value.map(formatValue).join(" ")}]`;
  if (isGoStruct(value)) return `{${Object.values(value).map(formatValue).join(" ")}}`;
  if (typeof value === "object") {
    const entries = Object.keys(value).sort().map((key) => `${key}:${formatValue((value as Record<string, unknown>)[key])}`);
    return `map[${entries.join(" ")}]`;
  }
  return typeof value === "function" ? "<func>" : String(value);
}

/**
 * Integers print as integers; other numbers as Go's %v of a float64: shortest digits, in exponent
 * form when the exponent is below -4 or at least 6 (strconv's shortest %g).
 */
export function formatNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf";
  const magnitude = Math.abs(value);
  const text = magnitude < 1e-4 || magnitude >= 1e6 ? value.toExponential() : String(value);
  return text.replace(/e([+-])(\d)$/, "e$10$2");
}

/** What an action prints: like %v, except that nil and a missing value both read "<no value>". */
export function formatActionValue(value: unknown): string {
  return value === null || value === undefined ? "<no value>" : formatValue(value);
}

/** encoding/json's Marshal: struct JSON forms, map keys as given, and <, >, & escaped as Go does. */
export function toGoJson(value: unknown): string {
  const text = JSON.stringify(value === undefined ? null : value) ?? "null";
  return text.replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go's ==, for eq and ne: basic values of the same kind; nil equals only nil. */
export function goEquals(a: unknown, b: unknown): boolean {
  const aNil = a === undefined || a === null;
  const bNil = b === undefined || b === null;
  if (aNil || bNil) return aNil && bNil;
  if (typeof a === "object" || typeof b === "object") throw new TemplateValueError(`non-comparable type ${typeName(typeof a === "object" ? a : b)}`);
  if (typeof a !== typeof b) throw new TemplateValueError(`incompatible types for comparison: ${typeName(a)} and ${typeName(b)}`);
  return a === b;
}

/** Go's <, for lt/le/gt/ge: numbers with numbers, strings with strings. */
export function goLess(a: unknown, b: unknown): boolean {
  const ordered = (v: unknown) => typeof v === "number" || typeof v === "string";
  if (!ordered(a) || !ordered(b)) throw new TemplateValueError(`invalid type for comparison: ${typeName(ordered(a) ? b : a)}`);
  if (typeof a !== typeof b) throw new TemplateValueError(`incompatible types for comparison: ${typeName(a)} and ${typeName(b)}`);
  return (a as number | string) < (b as number | string);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Strings are bytes in Go: len and slice count UTF-8 bytes. */
export function byteLength(text: string): number {
  return encoder.encode(text).length;
}

export function sliceBytes(text: string, start: number, end: number): string {
  return decoder.decode(encoder.encode(text).subarray(start, end));
}

export function byteAt(text: string, index: number): number | undefined {
  return encoder.encode(text)[index];
}
