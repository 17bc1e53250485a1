// JSON Schema as a GBNF grammar, so sampling can only produce JSON that validates. Supported: type (and
// lists of types), properties, required, additionalProperties, propertyNames, minProperties/maxProperties,
// items, prefixItems/additionalItems (tuples), minItems/maxItems, enum, const, anyOf/oneOf, local $ref
// with $defs/definitions, string minLength/maxLength/pattern/format (string-formats.ts), and
// minimum/maximum/exclusiveMinimum/exclusiveMaximum/multipleOf on integers and numbers. Annotations are
// skipped; any other keyword is refused, naming it, rather than ignored.
//
// Objects keep the schema's property order. When `properties` is given and `additionalProperties` is not,
// no other keys are produced (a subset of what the schema allows, and what clients mean). Some keywords
// are enforced by a subset of the values they allow (number bounds that are not whole move inward,
// multipleOf may list values): every value produced is valid. Unbounded numbers and whitespace are kept
// short so that random logits still end in valid JSON.
import { alternatives, literal, repeat, RuleSet } from "./gbnf.ts";
import { checkSchemaDepth } from "./nesting.ts";
import { choiceGrammar } from "./choice-grammar.ts";
import { ANY_NUMBER, boundedNumber, integerRange, type NumberBound } from "./number-range.ts";
import { integerStep, multipleOfGrammar } from "./multiple-of.ts";
import { FORMAT_LENGTHS, formatGrammar, patternAcceptsFormat } from "./string-formats.ts";
import { regexToGbnf } from "./regex-grammar.ts";
import { StructuredOutputError } from "./errors.ts";

/** Keywords that only describe; every schema generator writes some. */
const ANNOTATIONS = new Set(["title", "description", "$schema", "$id", "default", "examples", "$comment", "readOnly", "writeOnly", "deprecated"]);
const SUPPORTED = new Set([
  "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "enum", "const", "anyOf", "oneOf",
  "$ref", "$defs", "definitions", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "multipleOf", "propertyNames", "minProperties", "maxProperties", "prefixItems", "additionalItems",
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
      if (["properties", "additionalProperties", "propertyNames", "minProperties", "maxProperties"].some((k) => schema[k] !== undefined)) return ["object"];
      if (["items", "prefixItems", "additionalItems", "minItems", "maxItems"].some((k) => schema[k] !== undefined)) return ["array"];
      if (["minLength", "maxLength", "pattern", "format"].some((k) => schema[k] !== undefined)) return ["string"];
      if (["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"].some((k) => schema[k] !== undefined)) return ["number"];
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
    const additional = schema.additionalProperties;
    // Extra keys only when asked for, or when nothing else describes the object (`properties: {}` does).
    let extraSchema: unknown = additional === undefined ? schema.properties === undefined : additional;
    const keyNames = this.listedKeys(schema.propertyNames, path);
    const names = Object.keys(properties);
    // Keys that propertyNames lists (a record with enum keys) are members with the extra keys' schema.
    const extraNames = keyNames && extraSchema !== false ? keyNames.filter((name) => !names.includes(name)) : [];
    if (keyNames) {
      const outside = names.find((name) => !keyNames.includes(name));
      if (outside !== undefined && required.includes(outside)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} requires "${outside}" but its propertyNames do not allow it`, "propertyNames");
    }
    for (const name of required) {
      if (typeof name !== "string") throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.required must list strings`, "required");
      const defined = names.includes(name) || extraNames.includes(name) || (extraSchema !== false && !keyNames && schema.propertyNames === undefined);
      if (!defined) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} requires "${name}" but does not define it in properties`, "required");
      if (!names.includes(name) && !extraNames.includes(name)) extraNames.push(name);
    }
    const memberSchemas = [
      ...names.filter((name) => !keyNames || keyNames.includes(name)).map((name) => [name, properties[name], `${path}/properties/${name}`] as const),
      ...extraNames.map((name) => [name, extraSchema, `${path}/additionalProperties`] as const),
    ];
    const members = memberSchemas.map(([name, memberSchema, memberPath]) => ({
      required: required.includes(name),
      text: `${this.key(name)} ":" space ${this.rule(`${path}-${name}`, this.value(memberSchema, memberPath))}`,
    }));
    if (keyNames) extraSchema = false;
    let extra: string | undefined;
    if (extraSchema !== false) {
      const value = this.value(extraSchema, `${path}/additionalProperties`);
      extra = this.rule(`${path}-extra`, `${this.keyGrammar(schema.propertyNames, path)} ":" space ${value}`);
    }
    const counts = { min: this.count(schema, "minProperties", path), max: this.count(schema, "maxProperties", path) };
    const body = this.memberList(members, extra, path, '"," space', counts);
    if (body === undefined) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} cannot have between minProperties and maxProperties properties`, counts.min !== undefined ? "minProperties" : "maxProperties");
    return this.rule(`${path}-object`, `"{" space ${body === "" ? "" : `${body} `}"}" space`);
  }

  /** The key names a propertyNames schema allows, when it lists them (enum or const); undefined otherwise. */
  private listedKeys(propertyNames: unknown, path: string): string[] | undefined {
    if (!isObject(propertyNames)) return undefined;
    const listed = propertyNames.const !== undefined ? [propertyNames.const] : Array.isArray(propertyNames.enum) ? propertyNames.enum : undefined;
    if (!listed) return undefined;
    if (!listed.every((name): name is string => typeof name === "string")) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.propertyNames must list strings`, "propertyNames");
    return listed;
  }

  /** The grammar of an extra key: any string, or one that propertyNames allows. */
  private keyGrammar(propertyNames: unknown, path: string): string {
    if (propertyNames === undefined || propertyNames === true) return "string";
    if (!isObject(propertyNames)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.propertyNames must be a schema`, "propertyNames");
    const type = propertyNames.type;
    if (type !== undefined && type !== "string" && !(Array.isArray(type) && type.includes("string"))) {
      throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.propertyNames must allow strings`, "propertyNames");
    }
    return this.rule(`${path}-key`, this.value({ ...propertyNames, type: "string" }, `${path}/propertyNames`));
  }

  /**
   * The members in order: required ones always, optional ones or not, then any extra keys, each after a
   * separator but the first (a comma for JSON objects, ", " between keyword arguments). With `counts`,
   * only lists of min to max members; undefined when no list fits.
   */
  memberList(
    members: Array<{ required: boolean; text: string }>, extra: string | undefined, path: string, separator = '"," space',
    counts: { min?: number | undefined; max?: number | undefined } = {},
  ): string | undefined {
    const { min = 0, max } = counts;
    // Counts past both bounds behave alike, so the count saturates there.
    const cap = Math.max(min, max === undefined ? 0 : max + 1);
    const cache = new Map<string, string | undefined>();
    const keyOf = (index: number, needComma: boolean, count: number) => `${index}:${needComma}:${count}`;
    /** The list from member `index` on, once the lists after it (taken, then skipped) are in the cache. */
    const from = (index: number, needComma: boolean, count: number): string | undefined => {
      const comma = needComma ? `${separator} ` : "";
      let expression: string | undefined;
      if (max !== undefined && count > max) expression = undefined;
      else if (index === members.length) {
        const least = Math.max(0, min - count);
        const most = max === undefined ? undefined : max - count;
        if (!extra) expression = least === 0 ? "" : undefined;
        else if (most === 0) expression = "";
        else {
          const first = `${comma}${extra}`;
          const more = repeat(`(${separator} ${extra})`, Math.max(0, least - 1), most === undefined ? undefined : most - 1);
          const list = more === '""' ? first : `${first} ${more}`;
          expression = least === 0 ? `(${list})?` : list;
        }
      } else {
        const member = members[index]!;
        const rest = cache.get(keyOf(index + 1, true, Math.min(cap, count + 1)));
        const taken = rest === undefined ? undefined : `${comma}${member.text}${rest ? ` ${rest}` : ""}`;
        const skipped = member.required ? undefined : cache.get(keyOf(index + 1, needComma, count));
        if (taken === undefined) expression = skipped;
        else if (skipped === undefined) expression = taken;
        else expression = `(${taken}${skipped ? ` | ${skipped}` : ` | ""`})`;
      }
      return expression === undefined || expression === "" ? expression : this.rule(`${path}-members`, expression);
    };
    // Depth first without recursion (an object may have thousands of members): each list after its
    // continuations, the one that takes the member first, so rules are named in a stable order.
    const stack: Array<{ index: number; needComma: boolean; count: number; expanded: boolean }> = [{ index: 0, needComma: false, count: 0, expanded: false }];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const key = keyOf(frame.index, frame.needComma, frame.count);
      if (cache.has(key)) {
        stack.pop();
        continue;
      }
      const inner = frame.index < members.length && !(max !== undefined && frame.count > max);
      if (inner && !frame.expanded) {
        frame.expanded = true;
        if (!members[frame.index]!.required) stack.push({ index: frame.index + 1, needComma: frame.needComma, count: frame.count, expanded: false });
        stack.push({ index: frame.index + 1, needComma: true, count: Math.min(cap, frame.count + 1), expanded: false });
        continue;
      }
      stack.pop();
      cache.set(key, from(frame.index, frame.needComma, frame.count));
    }
    return cache.get(keyOf(0, false, 0));
  }

  private array(schema: Record<string, unknown>, path: string): string {
    const min = this.count(schema, "minItems", path) ?? 0;
    const max = this.count(schema, "maxItems", path);
    if (max !== undefined && max < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} has maxItems below minItems`, "maxItems");
    // A tuple: prefixItems (2020-12), or a list of items with additionalItems (draft 7).
    const prefix = schema.prefixItems ?? (Array.isArray(schema.items) ? schema.items : undefined);
    if (prefix !== undefined) return this.tuple(schema, prefix, min, max, path);
    if (schema.additionalItems !== undefined) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.additionalItems needs a list of items`, "additionalItems");
    const item = schema.items === undefined ? "value" : this.rule(`${path}-item`, this.value(schema.items, `${path}/items`));
    let list: string;
    if (max === 0) list = "";
    else {
      const more = repeat(`("," space ${item})`, Math.max(0, min - 1), max === undefined ? undefined : max - 1);
      list = min === 0 ? `(${item} ${more})?` : `${item} ${more}`;
    }
    return this.rule(`${path}-array`, `"[" space ${list ? `${list} ` : ""}"]" space`);
  }

  /** An array whose first items each have their own schema; later ones the rest schema, if any. */
  private tuple(schema: Record<string, unknown>, prefix: unknown, min: number, max: number | undefined, path: string): string {
    const keyword = schema.prefixItems !== undefined ? "prefixItems" : "items";
    if (!Array.isArray(prefix)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.${keyword} must be a list`, keyword);
    const restSchema = keyword === "prefixItems" ? schema.items : schema.additionalItems;
    if (keyword === "prefixItems" && schema.additionalItems !== undefined) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} combines prefixItems with additionalItems`, "additionalItems");
    const positions = prefix.map((item, i) => this.rule(`${path}-item-${i}`, this.value(item, `${path}/${keyword}/${i}`)));
    const rest = restSchema === false ? undefined : this.rule(`${path}-item`, restSchema === undefined ? "value" : this.value(restSchema, `${path}/${keyword === "prefixItems" ? "items" : "additionalItems"}`));
    const longest = rest === undefined ? Math.min(positions.length, max ?? positions.length) : max;
    if (longest !== undefined && longest < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} cannot have minItems items`, "minItems");
    // Items from position i on, the first of them after a comma unless i is 0.
    const from = (i: number): string => {
      const comma = i === 0 ? "" : '"," space ';
      if (i >= positions.length) {
        if (rest === undefined || longest === i) return "";
        const least = Math.max(0, min - i);
        const more = repeat(`("," space ${rest})`, Math.max(0, least - 1), longest === undefined ? undefined : longest - i - 1);
        const list = `${comma}${rest}${more === '""' ? "" : ` ${more}`}`;
        return least === 0 ? `(${list})?` : list;
      }
      if (longest !== undefined && i >= longest) return "";
      const tail = from(i + 1);
      const taken = `${comma}${positions[i]}${tail ? ` ${tail}` : ""}`;
      return i < min ? taken : `(${taken})?`;
    };
    const list = from(0);
    return this.rule(`${path}-tuple`, `"[" space ${list ? `${list} ` : ""}"]" space`);
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
    let pattern = schema.pattern;
    const format = schema.format;
    // zod writes a pattern beside each format: when it accepts what the format's grammar writes, that grammar stands for both.
    if (typeof pattern === "string" && format !== undefined && patternAcceptsFormat(pattern, format)) pattern = undefined;
    // A format's grammar writes values of known lengths: length bounds that allow them all are met (pydantic's HttpUrl has some).
    const lengths = pattern === undefined && typeof format === "string" ? FORMAT_LENGTHS[format as keyof typeof FORMAT_LENGTHS] : undefined;
    const formatFits = lengths !== undefined && (min ?? 0) <= lengths[0] && (max ?? Infinity) >= lengths[1];
    if ((pattern !== undefined || format !== undefined) && (min !== undefined || max !== undefined) && !formatFits) {
      throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} combines ${pattern !== undefined ? "pattern" : "format"} with minLength/maxLength`, pattern !== undefined ? "pattern" : "format");
    }
    if (pattern !== undefined) {
      if (typeof pattern !== "string") throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.pattern must be a string`, "pattern");
      return this.rule(`${path}-pattern`, `"\\"" ${regexToGbnf(pattern, "json-string", { search: true, anyChar: "char" })} "\\"" space`);
    }
    if (format !== undefined) return this.rule(`${path}-format`, `"\\"" ${formatGrammar(this.rules, format, path)} "\\"" space`);
    if (min === undefined && max === undefined) return "string";
    if (max !== undefined && min !== undefined && max < min) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} has maxLength below minLength`, "maxLength");
    return this.rule(`${path}-string`, `"\\"" ${repeat("char", min ?? 0, max)} "\\"" space`);
  }

  private bound(schema: Record<string, unknown>, keyword: string, path: string): number | undefined {
    const value = schema[keyword];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path}.${keyword} must be a number`, keyword);
    return value;
  }

  /**
   * The lower and upper bounds: minimum/maximum, exclusiveMinimum/exclusiveMaximum as numbers (2020-12)
   * or as booleans beside minimum/maximum (draft 4, OpenAPI 3.0); the tighter bound wins.
   */
  private bounds(schema: Record<string, unknown>, path: string): { min?: NumberBound; max?: NumberBound } {
    const pick = (inclusiveKey: string, exclusiveKey: string, tighter: (a: number, b: number) => boolean): NumberBound | undefined => {
      const exclusive = schema[exclusiveKey];
      const inclusive = this.bound(schema, inclusiveKey, path);
      if (typeof exclusive === "boolean") return inclusive === undefined ? undefined : { value: inclusive, exclusive };
      const strict = this.bound(schema, exclusiveKey, path);
      if (strict === undefined) return inclusive === undefined ? undefined : { value: inclusive, exclusive: false };
      if (inclusive === undefined || tighter(strict, inclusive) || strict === inclusive) return { value: strict, exclusive: true };
      return { value: inclusive, exclusive: false };
    };
    const min = pick("minimum", "exclusiveMinimum", (a, b) => a > b);
    const max = pick("maximum", "exclusiveMaximum", (a, b) => a < b);
    if (min && max && (max.value < min.value || (max.value === min.value && (min.exclusive || max.exclusive)))) {
      throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no number: its maximum is not above its minimum`, "maximum");
    }
    return { ...(min ? { min } : {}), ...(max ? { max } : {}) };
  }

  private integer(schema: Record<string, unknown>, path: string): string {
    const { min, max } = this.bounds(schema, path);
    if (schema.multipleOf !== undefined) return this.rule(`${path}-integer`, `${multipleOfGrammar(integerStep(schema.multipleOf, path), min, max, path)} space`);
    const low = min === undefined ? undefined : min.exclusive ? Math.floor(min.value) + 1 : Math.ceil(min.value);
    const high = max === undefined ? undefined : max.exclusive ? Math.ceil(max.value) - 1 : Math.floor(max.value);
    if (low === undefined && high === undefined) return "integer";
    if (low !== undefined && high !== undefined && high < low) throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no integer between its bounds`, "minimum");
    return this.rule(`${path}-integer`, `${integerRange(low, high)} space`);
  }

  private number(schema: Record<string, unknown>, path: string): string {
    const { min, max } = this.bounds(schema, path);
    if (schema.multipleOf !== undefined) return this.rule(`${path}-number`, `${multipleOfGrammar(schema.multipleOf, min, max, path)} space`);
    if (min === undefined && max === undefined) return "number";
    let range: string;
    try {
      range = boundedNumber(min, max);
    } catch {
      throw new StructuredOutputError(`Cannot enforce JSON schema: ${path} allows no number llamux can write between its bounds`, "minimum");
    }
    return this.rule(`${path}-number`, `${range} space`);
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
    // Bodies are written only when the rule set lacks them: a tool list shares one set across hundreds of schemas.
    const define = (name: string, body: string | (() => string)) => {
      if (!this.rules.has(name)) this.rules.define(name, typeof body === "string" ? body : body());
    };
    define("space", '" "?');
    // llama.cpp decodes malformed UTF-8 (a 0xF8-0xFF lead byte) to surrogates or code points past
    // U+10FFFF (up to 22 bits): keep them out, since they come out as U+FFFD per byte.
    define("char", '[^"\\\\\\x00-\\x1f\\uD800-\\uDFFF\\U00110000-\\U003FFFFF] | "\\\\" (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})');
    define("string", '"\\"" char* "\\"" space');
    define("number", `${ANY_NUMBER} space`);
    define("integer", () => `${integerRange(undefined, undefined)} space`);
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
