// JSON Schema as a GBNF grammar, so sampling can only produce JSON that validates. Supported: type (and
// lists of types), properties, required, additionalProperties, items, minItems/maxItems, enum, const,
// anyOf/oneOf, local $ref with $defs/definitions, string minLength/maxLength/pattern/format (date, time,
// date-time, uuid), integer minimum/maximum/exclusiveMinimum/exclusiveMaximum and number bounds that are
// integers. Annotations are skipped; any other keyword is refused, naming it, rather than ignored.
//
// Objects keep the schema's property order. When `properties` is given and `additionalProperties` is not,
// no other keys are produced (a subset of what the schema allows, and what clients mean). Unbounded
// numbers and whitespace are kept short so that random logits still end in valid JSON.
import { alternatives, literal, repeat, RuleSet } from "./gbnf.ts";
import { checkSchemaDepth } from "./nesting.ts";
import { choiceGrammar } from "./choice-grammar.ts";
import { ANY_NUMBER, integerRange, numberRange } from "./number-range.ts";
import { regexToGbnf } from "./regex-grammar.ts";
import { StructuredOutputError } from "./errors.ts";

/** Keywords that only describe; every schema generator writes some. */
const ANNOTATIONS = new Set(["title", "description", "$schema", "$id", "default", "examples", "$comment", "readOnly", "writeOnly", "deprecated"]);
const SUPPORTED = new Set([
  "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "enum", "const", "anyOf", "oneOf",
  "$ref", "$defs", "definitions", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
]);
const TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
type JsonType = (typeof TYPES)[number];

export interface JsonGrammarOptions {
  /** Write true/false/null as Python's True/False/None (values inside pythonic tool calls). Default: "json". */
  literals?: "json" | "python";
}

type Schema = Record<string, unknown> | boolean;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Writes the grammar of one schema (and the rules it needs) into a RuleSet. */
export class JsonSchemaGrammar {
  private readonly refs = new Map<string, string>();

  constructor(private readonly rules: RuleSet, private readonly root: unknown, private readonly options: JsonGrammarOptions = {}) {
    this.defineBasics();
  }

  /** A GBNF expression for the values `schema` allows. */
  value(schema: unknown, path = "#"): string {
    if (schema === true || (isObject(schema) && Object.keys(schema).every((key) => ANNOTATIONS.has(key) || key === "$defs" || key === "definitions"))) return "value";
    if (schema === false) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no value`);
    if (!isObject(schema)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} must be an object or a boolean`);
    for (const key of Object.keys(schema)) {
      if (!SUPPORTED.has(key) && !ANNOTATIONS.has(key)) {
        throw new StructuredOutputError(`Unsupported JSON schema keyword "${key}" at ${path}: it cannot be enforced`, key);
      }
    }
    if (typeof schema.$ref === "string") return this.ref(schema.$ref, path);
    if (schema.const !== undefined) return this.jsonLiteral(schema.const);
    if (Array.isArray(schema.enum)) {
      if (schema.enum.length === 0) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.enum is empty`, "enum");
      return `${choiceGrammar(schema.enum.map((item) => this.writeValue(item)))} space`;
    }
    const union = schema.anyOf ?? schema.oneOf;
    if (union !== undefined) {
      const keyword = schema.anyOf !== undefined ? "anyOf" : "oneOf";
      if (!Array.isArray(union) || union.length === 0) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.${keyword} must be a non-empty list`, keyword);
      const { anyOf: _a, oneOf: _o, ...rest } = schema;
      // Object keywords beside a union do not combine by merging (additionalProperties sees only its siblings).
      for (const key of ["properties", "required", "additionalProperties"]) {
        if (rest[key] !== undefined) throw new StructuredOutputError(`Unsupported JSON schema keyword "${key}" beside ${keyword} at ${path}: move it into each branch`, key);
      }
      // Sibling keywords apply to every branch.
      return alternatives(union.map((branch, i) => this.rule(`${path}-${keyword}-${i}`, this.value(isObject(branch) ? { ...rest, ...branch } : branch, `${path}/${keyword}/${i}`))));
    }
    const types = this.typesOf(schema, path);
    return alternatives(types.map((type) => this.typed(type, schema, path)));
  }

  private typesOf(schema: Record<string, unknown>, path: string): JsonType[] {
    const declared = schema.type;
    if (declared === undefined) {
      if (schema.properties !== undefined || schema.additionalProperties !== undefined) return ["object"];
      if (schema.items !== undefined || schema.minItems !== undefined || schema.maxItems !== undefined) return ["array"];
      if (["minLength", "maxLength", "pattern", "format"].some((k) => schema[k] !== undefined)) return ["string"];
      if (["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].some((k) => schema[k] !== undefined)) return ["number"];
      return [...TYPES];
    }
    const list = Array.isArray(declared) ? declared : [declared];
    for (const type of list) {
      if (!(TYPES as readonly unknown[]).includes(type)) throw new StructuredOutputError(`Cannot enforce JSON schema: unknown type ${JSON.stringify(type)} at ${path}`, "type");
    }
    if (list.length === 0) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.type is empty`, "type");
    return list as JsonType[];
  }

  private typed(type: JsonType, schema: Record<string, unknown>, path: string): string {
    switch (type) {
      case "object":
        return this.object(schema, path);
      case "array":
        return this.array(schema, path);
      case "string":
        return this.string(schema, path);
      case "integer":
        return this.integer(schema, path);
      case "number":
        return this.number(schema, path);
      case "boolean":
        return "boolean";
      case "null":
        return "null";
    }
  }

  private object(schema: Record<string, unknown>, path: string): string {
    const properties = schema.properties ?? {};
    if (!isObject(properties)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.properties must be an object`, "properties");
    const required = schema.required ?? [];
    if (!Array.isArray(required)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.required must be a list`, "required");
    const names = Object.keys(properties);
    for (const name of required) {
      if (typeof name !== "string") throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.required must list strings`, "required");
      if (!names.includes(name)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} requires "${name}" but does not define it in properties`, "required");
    }
    const additional = schema.additionalProperties;
    // Extra keys only when asked for, or when nothing else describes the object.
    const extraSchema = additional === undefined ? (names.length === 0 ? true : false) : additional;
    const members = names.map((name) => ({
      required: required.includes(name),
      text: `${this.key(name)} ":" space ${this.rule(`${path}-${name}`, this.value(properties[name], `${path}/properties/${name}`))}`,
    }));
    let extra: string | undefined;
    if (extraSchema !== false) {
      const value = this.value(extraSchema, `${path}/additionalProperties`);
      extra = this.rule(`${path}-extra`, `string ":" space ${value}`);
    }
    const body = this.memberList(members, extra, path);
    return this.rule(`${path}-object`, `"{" space ${body === "" ? "" : `${body} `}"}" space`);
  }

  /**
   * The members in order: required ones always, optional ones or not, then any extra keys, each after a
   * separator but the first (a comma for JSON objects, ", " between keyword arguments).
   */
  memberList(members: Array<{ required: boolean; text: string }>, extra: string | undefined, path: string, separator = '"," space'): string {
    const cache = new Map<string, string>();
    const from = (index: number, needComma: boolean): string => {
      const key = `${index}:${needComma}`;
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const comma = needComma ? `${separator} ` : "";
      let expression: string;
      if (index === members.length) {
        expression = extra ? `(${comma}${extra} (${separator} ${extra})*)?` : "";
      } else {
        const member = members[index]!;
        const rest = from(index + 1, true);
        const taken = `${comma}${member.text}${rest ? ` ${rest}` : ""}`;
        if (member.required) expression = taken;
        else {
          const skipped = from(index + 1, needComma);
          expression = `(${taken}${skipped ? ` | ${skipped}` : ` | ""`})`;
        }
      }
      const result = expression === "" ? "" : this.rule(`${path}-members`, expression);
      cache.set(key, result);
      return result;
    };
    return from(0, false);
  }

  private array(schema: Record<string, unknown>, path: string): string {
    const item = schema.items === undefined ? "value" : this.rule(`${path}-item`, this.value(schema.items, `${path}/items`));
    const min = this.count(schema, "minItems", path) ?? 0;
    const max = this.count(schema, "maxItems", path);
    if (max !== undefined && max < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} has maxItems below minItems`, "maxItems");
    let list: string;
    if (max === 0) list = "";
    else {
      const more = repeat(`("," space ${item})`, Math.max(0, min - 1), max === undefined ? undefined : max - 1);
      list = min === 0 ? `(${item} ${more})?` : `${item} ${more}`;
    }
    return this.rule(`${path}-array`, `"[" space ${list ? `${list} ` : ""}"]" space`);
  }

  private count(schema: Record<string, unknown>, keyword: string, path: string): number | undefined {
    const value = schema[keyword];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.${keyword} must be a non-negative integer`, keyword);
    }
    return value;
  }

  private string(schema: Record<string, unknown>, path: string): string {
    const min = this.count(schema, "minLength", path);
    const max = this.count(schema, "maxLength", path);
    const pattern = schema.pattern;
    const format = schema.format;
    if ((pattern !== undefined || format !== undefined) && (min !== undefined || max !== undefined)) {
      throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} combines ${pattern !== undefined ? "pattern" : "format"} with minLength/maxLength`, pattern !== undefined ? "pattern" : "format");
    }
    if (pattern !== undefined) {
      if (typeof pattern !== "string") throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.pattern must be a string`, "pattern");
      return this.rule(`${path}-pattern`, `"\\"" ${regexToGbnf(pattern, "json-string", { search: true, anyChar: "char" })} "\\"" space`);
    }
    if (format !== undefined) return this.rule(`${path}-format`, `"\\"" ${this.format(format, path)} "\\"" space`);
    if (min === undefined && max === undefined) return "string";
    if (max !== undefined && min !== undefined && max < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} has maxLength below minLength`, "maxLength");
    return this.rule(`${path}-string`, `"\\"" ${repeat("char", min ?? 0, max)} "\\"" space`);
  }

  private format(format: unknown, path: string): string {
    const date = this.rules.add("date", '[0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))');
    const time = this.rules.add("time", '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,3})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])');
    switch (format) {
      case "date":
        return date;
      case "time":
        return time;
      case "date-time":
        return `${date} "T" ${time}`;
      case "uuid":
        return this.rules.add("uuid", '[0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12}');
      default:
        throw new StructuredOutputError(`Unsupported JSON schema format ${JSON.stringify(format)} at ${path}: only date, time, date-time and uuid can be enforced`, "format");
    }
  }

  private bound(schema: Record<string, unknown>, keyword: string, path: string): number | undefined {
    const value = schema[keyword];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.${keyword} must be a number`, keyword);
    return value;
  }

  private integer(schema: Record<string, unknown>, path: string): string {
    const lows = [this.bound(schema, "minimum", path), this.bound(schema, "exclusiveMinimum", path)].map((v, i) => (v === undefined ? undefined : i === 0 ? Math.ceil(v) : Math.floor(v) + 1));
    const highs = [this.bound(schema, "maximum", path), this.bound(schema, "exclusiveMaximum", path)].map((v, i) => (v === undefined ? undefined : i === 0 ? Math.floor(v) : Math.ceil(v) - 1));
    const min = lows.filter((v) => v !== undefined).reduce<number | undefined>((a, b) => (a === undefined ? b : Math.max(a, b!)), undefined);
    const max = highs.filter((v) => v !== undefined).reduce<number | undefined>((a, b) => (a === undefined ? b : Math.min(a, b!)), undefined);
    if (min === undefined && max === undefined) return "integer";
    if (min !== undefined && max !== undefined && max < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no integer between its bounds`, "minimum");
    return this.rule(`${path}-integer`, `${integerRange(min, max)} space`);
  }

  private number(schema: Record<string, unknown>, path: string): string {
    for (const keyword of ["exclusiveMinimum", "exclusiveMaximum"]) {
      if (schema[keyword] !== undefined) throw new StructuredOutputError(`Unsupported JSON schema keyword "${keyword}" on a number at ${path}: it cannot be enforced`, keyword);
    }
    const min = this.bound(schema, "minimum", path);
    const max = this.bound(schema, "maximum", path);
    if (min === undefined && max === undefined) return "number";
    for (const [keyword, value] of [["minimum", min], ["maximum", max]] as const) {
      if (value !== undefined && !Number.isInteger(value)) {
        throw new StructuredOutputError(`Unsupported JSON schema keyword "${keyword}" at ${path}: only whole-number bounds on a number can be enforced`, keyword);
      }
    }
    if (min !== undefined && max !== undefined && max < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} has maximum below minimum`, "maximum");
    return this.rule(`${path}-number`, `${numberRange(min, max)} space`);
  }

  private ref(ref: string, path: string): string {
    const known = this.refs.get(ref);
    if (known) return known;
    if (!ref.startsWith("#")) throw new StructuredOutputError(`Cannot enforce JSON schema: only local $ref values ("#/...") are supported, got ${JSON.stringify(ref)} at ${path}`, "$ref");
    let target: unknown = this.root;
    for (const raw of ref.slice(1).split("/").filter(Boolean)) {
      const part = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
      target = isObject(target) || Array.isArray(target) ? (target as Record<string, unknown>)[part] : undefined;
      if (target === undefined) throw new StructuredOutputError(`Cannot enforce JSON schema: $ref ${JSON.stringify(ref)} at ${path} points to nothing`, "$ref");
    }
    const name = this.rules.reserve(`ref-${ref.split("/").pop() || "root"}`);
    this.refs.set(ref, name);
    this.rules.define(name, this.value(target as Schema, ref));
    return name;
  }

  /** A named rule for an expression (so the grammar stays readable and shared parts are written once). */
  private rule(hint: string, body: string): string {
    if (/^[a-z0-9-]+$/.test(body)) return body;
    return this.rules.add(hint.replace(/^#/, "") || "value", body);
  }

  private key(name: string): string {
    return `${literal(JSON.stringify(name))} space`;
  }

  /** A JSON value written as literal text, with Python's True/False/None when asked. */
  private jsonLiteral(value: unknown): string {
    return `${literal(this.writeValue(value))} space`;
  }

  private writeValue(value: unknown): string {
    if (this.options.literals !== "python") return JSON.stringify(value);
    if (value === true) return "True";
    if (value === false) return "False";
    if (value === null) return "None";
    if (Array.isArray(value)) return `[${value.map((v) => this.writeValue(v)).join(", ")}]`;
    if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${this.writeValue(v)}`).join(", ")}}`;
    return JSON.stringify(value);
  }

  private defineBasics(): void {
    const python = this.options.literals === "python";
    const define = (name: string, body: string) => {
      if (!this.rules.has(name)) this.rules.define(name, body);
    };
    define("space", '" "?');
    // llama.cpp decodes malformed UTF-8 (a 0xF8-0xFF lead byte) to surrogates or code points past
    // U+10FFFF (up to 22 bits): keep them out, since they come out as U+FFFD per byte.
    define("char", '[^"\\\\\\x00-\\x1f\\uD800-\\uDFFF\\U00110000-\\U003FFFFF] | "\\\\" (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})');
    define("string", '"\\"" char* "\\"" space');
    define("number", `${ANY_NUMBER} space`);
    define("integer", `${integerRange(undefined, undefined)} space`);
    define("boolean", python ? '("True" | "False") space' : '("true" | "false") space');
    define("null", python ? '"None" space' : '"null" space');
    define("object", '"{" space (string ":" space value ("," space string ":" space value)*)? "}" space');
    define("array", '"[" space (value ("," space value)*)? "]" space');
    define("value", "object | array | string | number | boolean | null");
  }
}

/** A complete grammar (root rule included) for JSON text that validates against `schema`. */
export function jsonSchemaToGbnf(schema: unknown, options: JsonGrammarOptions = {}): string {
  checkSchemaDepth(schema);
  const rules = new RuleSet();
  const body = new JsonSchemaGrammar(rules, schema, options).value(schema);
  return rules.toString(body);
}

/** Any JSON object (OpenAI's json_object, Ollama's "json"). */
export function jsonObjectGbnf(): string {
  return jsonSchemaToGbnf({ type: "object" });
}
