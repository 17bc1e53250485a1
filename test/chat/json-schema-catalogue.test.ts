// The JSON schemas everyday libraries write for everyday types (zod 4's z.toJSONSchema, zod-to-json-schema
// over zod 3, pydantic 2's shapes as fixtures) are enforced, not refused: a random-weight model constrained
// by each schema's grammar writes JSON that ajv (with ajv-formats) validates, and for zod schemas zod's own
// parse accepts, ending on its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { zodToJsonSchema } from "zod-to-json-schema";
import { Engine } from "../../src/engine/engine.ts";
import { jsonSchemaToGbnf, StructuredOutputError } from "../../src/chat/structured/index.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { generateWithGrammar } from "../fixtures/engine-run.ts";
import { PYDANTIC_SCHEMAS } from "../fixtures/pydantic-schemas.ts";

let engine: Engine;

const generate = (grammar: string, seed: number, maxTokens = 600) => generateWithGrammar(engine, "Answer in JSON:", grammar, seed, maxTokens);

beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-lfm2"), parallel: 32, contextPerSequence: 640, threads: 2 });
});
afterAll(() => engine.dispose());

const name = z.string().min(1).max(8);

/** zod 4 types, with what z.toJSONSchema writes for them. */
const ZOD4: Record<string, z.ZodType> = {
  "object with email, url, positive int and optional fields": z.object({
    name, email: z.email(), website: z.url().optional(), age: z.int().positive().max(120), nickname: name.nullish(),
  }),
  "record with string keys (propertyNames)": z.record(z.string().max(4), z.int().min(0).max(9)),
  "record with enum keys": z.record(z.enum(["low", "high"]), z.boolean()),
  "partial record with enum keys": z.partialRecord(z.enum(["a", "b", "c"]), z.int().min(0).max(3)),
  "positive and bounded numbers": z.object({ price: z.number().positive(), ratio: z.number().gt(-1).lt(1), temperature: z.number().gte(-40.5).lte(60.5) }),
  "multipleOf on numbers and integers": z.object({ half: z.number().multipleOf(0.5), cents: z.number().multipleOf(0.01).nonnegative().max(10000), five: z.int().multipleOf(5).max(100), third: z.int().multipleOf(3) }),
  "network formats": z.object({ v4: z.ipv4(), v6: z.ipv6(), host: z.hostname(), id: z.uuid() }),
  "dates": z.object({ at: z.iso.datetime(), day: z.iso.date() }),
  "tuple": z.tuple([name, z.int().min(0).max(99)]),
  "tuple with rest": z.tuple([name], z.boolean()),
  "discriminated union": z.discriminatedUnion("kind", [z.object({ kind: z.literal("circle"), radius: z.number().positive().max(10) }), z.object({ kind: z.literal("square"), side: z.int().min(1).max(9) })]),
  "enum with default and nonempty array": z.object({ level: z.enum(["debug", "info"]).default("info"), tags: z.array(name).nonempty().max(3) }),
  "empty object": z.object({}),
};

/** zod 3 types through zod-to-json-schema (draft 7: items lists, additionalItems, boolean-free exclusives). */
const ZOD3: Record<string, z3.ZodTypeAny> = {
  "formats (url, email, ip, datetime, uuid)": z3.object({ url: z3.string().url(), email: z3.string().email(), ip: z3.string().ip(), when: z3.string().datetime(), id: z3.string().uuid() }),
  "record with key checks": z3.record(z3.string().max(5), z3.number().int().min(0).max(9)),
  "positive numbers and multipleOf": z3.object({ amount: z3.number().positive().multipleOf(0.01).max(1000), count: z3.number().int().positive(), step: z3.number().multipleOf(3) }),
  "tuple with rest": z3.tuple([z3.string().max(4)]).rest(z3.number().int().min(0).max(9)),
  "map": z3.map(z3.string().max(3), z3.boolean()),
  "nullable and optional": z3.object({ a: z3.string().max(4).nullable(), b: z3.number().int().min(0).max(5).optional(), e: z3.enum(["x", "y"]) }),
};

const catalogue: Array<{ source: string; title: string; schema: object; draft7?: boolean; parse?: (value: unknown) => boolean }> = [
  ...Object.entries(ZOD4).map(([title, type]) => ({ source: "zod 4", title, schema: z.toJSONSchema(type) as object, parse: (v: unknown) => type.safeParse(v).success })),
  // zod's own parse of a map takes a Map, not its JSON form: ajv alone judges that one.
  ...Object.entries(ZOD3).map(([title, type]) => ({
    source: "zod-to-json-schema", title, schema: zodToJsonSchema(type) as object, draft7: true, ...(title === "map" ? {} : { parse: (v: unknown) => type.safeParse(v).success }),
  })),
  ...Object.entries(PYDANTIC_SCHEMAS).map(([title, schema]) => ({ source: "pydantic", title, schema })),
];

describe("everyday schemas are enforced", () => {
  // ajv's multipleOf divides in floating point (0.07 / 0.01 is not whole): compare to 6 decimals.
  const ajv2020 = addFormats(new Ajv2020({ strict: false, multipleOfPrecision: 6 }));
  const ajv7 = addFormats(new Ajv({ strict: false, multipleOfPrecision: 6 }));

  test("the catalogue covers each keyword the libraries write", () => {
    const text = JSON.stringify(catalogue.map((entry) => entry.schema));
    for (const keyword of ["propertyNames", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "prefixItems", "additionalItems", "minProperties", "maxProperties", '"items":false']) {
      expect(text).toContain(keyword.startsWith('"') ? keyword : `"${keyword}"`);
    }
    for (const format of ["uri", "email", "ipv4", "ipv6", "hostname", "uuid", "date-time", "date"]) expect(text).toContain(`"format":"${format}"`);
  });

  // Every entry's generation starts at once: the engine decodes them in one batch.
  let outputs: Array<Promise<{ text: string; finish: string }>> = [];
  beforeAll(() => {
    outputs = catalogue.map((entry, index) => generate(jsonSchemaToGbnf(entry.schema), index + 1));
    for (const output of outputs) output.catch(() => {});
  });

  for (const [index, entry] of catalogue.entries()) {
    test(`${entry.source}: ${entry.title}`, async () => {
      const validate = (entry.draft7 ? ajv7 : ajv2020).compile(entry.schema);
      const { text, finish } = await outputs[index]!;
      expect(finish).toBe("stop");
      const value = JSON.parse(text);
      if (!validate(value)) throw new Error(`${text} fails: ${ajv2020.errorsText(validate.errors)}`);
      if (entry.parse && !entry.parse(value)) throw new Error(`${text} fails the zod schema's own parse`);
    }, 900_000);
  }
});

describe("what cannot be enforced is still a 400 naming the keyword", () => {
  const refused: Array<[object, string]> = [
    [{ type: "array", items: { type: "string" }, uniqueItems: true }, "uniqueItems"],
    [{ type: "object", patternProperties: { "^a": { type: "string" } } }, "patternProperties"],
    [{ type: "string", format: "ipvanyaddress" }, "format"],
    [{ type: "number", multipleOf: 1e-9 }, "multipleOf"],
    [{ type: "object", propertyNames: { type: "integer" } }, "propertyNames"],
    [{ type: "array", prefixItems: [{ type: "string" }], additionalItems: false }, "additionalItems"],
    [{ type: "object", properties: { a: { type: "string" } }, additionalProperties: false, minProperties: 2 }, "minProperties"],
    [{ type: "string", pattern: "^a(?=b)", minLength: 2 }, "pattern"],
  ];
  for (const [schema, keyword] of refused) {
    test(`"${keyword}" in ${JSON.stringify(schema)}`, () => {
      let caught: unknown;
      try {
        jsonSchemaToGbnf(schema);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StructuredOutputError);
      expect((caught as StructuredOutputError).keyword).toBe(keyword);
    });
  }
});
