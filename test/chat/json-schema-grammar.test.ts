// JSON Schema → GBNF on real libllama: a random-weight model constrained by each schema's grammar must
// write JSON that ajv validates, and end on its own (finish "stop"). Keywords that cannot be enforced are
// refused by name; annotations are not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Engine } from "../../src/engine/engine.ts";
import { constraintGrammar, jsonSchemaToGbnf, regexToGbnf, StructuredOutputError } from "../../src/chat/structured/index.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { generateWithGrammar } from "../fixtures/engine-run.ts";

let engine: Engine;

const generate = (grammar: string, seed: number, maxTokens = 400) => generateWithGrammar(engine, "Answer in JSON:", grammar, seed, maxTokens);

beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), parallel: 4, contextPerSequence: 768, threads: 2 });
});
afterAll(() => engine.dispose());

const short = { type: "string", maxLength: 6 };
const schemas: Record<string, object> = {
  "string": short,
  "bounded string": { type: "string", minLength: 2, maxLength: 4 },
  "integer range": { type: "integer", minimum: -12, maximum: 345 },
  "exclusive integer range": { type: "integer", exclusiveMinimum: 0, exclusiveMaximum: 10 },
  "number range": { type: "number", minimum: -3, maximum: 7 },
  "boolean": { type: "boolean" },
  "null": { type: "null" },
  "type union": { type: ["integer", "null"], maximum: 99, minimum: 0 },
  "enum": { enum: ["red", 2, true, null, { deep: [1] }] },
  "const": { const: { a: "b" } },
  "object with required and optional": {
    type: "object", properties: { name: short, age: { type: "integer", minimum: 0, maximum: 150 }, nick: short }, required: ["name"], additionalProperties: false,
  },
  "nested object": {
    type: "object", additionalProperties: false, required: ["user"],
    properties: { user: { type: "object", additionalProperties: false, required: ["id", "tags"], properties: { id: { type: "integer", minimum: 1, maximum: 9 }, tags: { type: "array", items: short, maxItems: 2 } } } },
  },
  "array bounds": { type: "array", items: { type: "integer", minimum: 0, maximum: 9 }, minItems: 2, maxItems: 4 },
  "empty array only": { type: "array", maxItems: 0 },
  "anyOf": { anyOf: [{ type: "integer", minimum: 0, maximum: 5 }, { type: "string", maxLength: 3 }] },
  "oneOf with type beside it": {
    type: "object", oneOf: [{ properties: { a: { const: 1 } }, required: ["a"], additionalProperties: false }, { properties: { b: { const: 2 } }, required: ["b"], additionalProperties: false }],
  },
  "$ref and $defs": {
    $defs: { point: { type: "object", properties: { x: { type: "integer", minimum: 0, maximum: 9 }, y: { type: "integer", minimum: 0, maximum: 9 } }, required: ["x", "y"], additionalProperties: false } },
    type: "object", properties: { from: { $ref: "#/$defs/point" }, to: { $ref: "#/$defs/point" } }, required: ["from", "to"], additionalProperties: false,
  },
  "definitions ref": { definitions: { flag: { type: "boolean" } }, type: "array", items: { $ref: "#/definitions/flag" }, maxItems: 3 },
  "pattern": { type: "string", pattern: "^[A-Z]{2}-\\d{3}$" },
  "pattern with quote and backslash": { type: "string", pattern: '^(a|"|\\\\){1,3}$' },
  "date": { type: "string", format: "date" },
  "time": { type: "string", format: "time" },
  "date-time": { type: "string", format: "date-time" },
  "uuid": { type: "string", format: "uuid" },
  "annotations are ignored": {
    $schema: "https://json-schema.org/draft/2020-12/schema", $id: "https://example.com/schemas/answer", title: "T", description: "d", $comment: "c",
    type: "object", properties: { ok: { type: "boolean", default: true, examples: [false] } }, required: ["ok"], additionalProperties: false,
  },
  "nullable string list": { type: "array", items: { type: ["string", "null"], maxLength: 3 }, maxItems: 3 },
};

describe("JSON schema grammars on a random-weight model", () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);

  test("at least 20 schemas", () => {
    expect(Object.keys(schemas).length).toBeGreaterThanOrEqual(20);
  });

  for (const [name, raw] of Object.entries(schemas)) {
    const schema = JSON.parse(JSON.stringify(raw)) as object;
    test(`${name}: every output validates`, async () => {
      const validate = ajv.compile(schema);
      const grammar = jsonSchemaToGbnf(schema);
      const results = [await generate(grammar, 11)];
      for (const { text, finish } of results) {
        expect(finish).toBe("stop");
        const value = JSON.parse(text);
        if (!validate(value)) throw new Error(`${JSON.stringify(text)} fails ${name}: ${ajv.errorsText(validate.errors)}`);
      }
    }, 60_000);
  }
});

describe("refusals", () => {
  const refused: Array<[object, string]> = [
    [{ type: "string", not: { const: "x" } }, "not"],
    [{ type: "object", patternProperties: { "^a": {} } }, "patternProperties"],
    [{ allOf: [{ type: "string" }] }, "allOf"],
    [{ type: "array", contains: { type: "string" } }, "contains"],
    [{ type: "string", format: "idn-email" }, "format"],
    [{ type: "number", multipleOf: 0 }, "multipleOf"],
    [{ type: "number", minimum: 2, exclusiveMaximum: 2 }, "maximum"],
    [{ type: "object", additionalProperties: false, anyOf: [{ properties: { a: { type: "null" } } }] }, "additionalProperties"],
  ];
  for (const [schema, keyword] of refused) {
    test(`"${keyword}" is refused by name`, () => {
      let caught: unknown;
      try {
        jsonSchemaToGbnf(schema);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StructuredOutputError);
      expect((caught as StructuredOutputError).keyword).toBe(keyword);
      expect((caught as Error).message).toContain(keyword === "format" ? "idn-email" : keyword);
    });
  }

  test("a $ref that points nowhere is refused", () => {
    expect(() => jsonSchemaToGbnf({ $ref: "#/$defs/missing" })).toThrow(StructuredOutputError);
  });
  test("lookarounds and back-references are refused", () => {
    expect(() => regexToGbnf("a(?=b)", "text")).toThrow(/lookarounds/);
    expect(() => regexToGbnf("(a)\\1", "text")).toThrow(/back-references/);
  });
});

describe("regex and choice constraints", () => {
  for (const pattern of ["[0-9]{3}-[a-f]{2,4}", "(yes|no|maybe)!?", "\\w{1,6}@\\w{1,5}\\.(com|org)", "[^a-z\\n]{1,8}"]) {
    test(`output matches ${pattern}`, async () => {
      const grammar = constraintGrammar({ type: "regex", pattern });
      for (const { text, finish } of await Promise.all([1, 2, 3].map((seed) => generate(grammar, seed, 60)))) {
        expect(finish).toBe("stop");
        expect(text).toMatch(new RegExp(`^(?:${pattern})$`));
      }
    }, 60_000);
  }

  test("choice gives one of the choices", async () => {
    const choices = ["alpha", "beta gamma", 'quote " and \\ backslash'];
    const grammar = constraintGrammar({ type: "choice", choices });
    for (const { text } of await Promise.all([1, 2, 3, 4].map((seed) => generate(grammar, seed, 40)))) expect(choices).toContain(text);
  }, 60_000);
});
