// The structured-output fields of an OpenAI-compatible chat body, as one OutputConstraint: OpenAI's and
// LM Studio's response_format, vLLM's structured_outputs and its older guided_* fields, and llama-server's
// raw `grammar`. Asking for two different constraints is an error, not a silent choice.
import { z } from "zod";
import type { OutputConstraint } from "../../chat/structured/constraint.ts";
import { badRequest } from "../api-error.ts";

export const structuredOutputFields = {
  response_format: z.looseObject({ type: z.string() }).nullable().optional()
    .describe('"text", "json_object" (optionally with `schema`), or "json_schema" with json_schema.schema'),
  structured_outputs: z.looseObject({
    json: z.union([z.string(), z.record(z.string(), z.unknown())]).nullable().optional(),
    regex: z.string().nullable().optional(),
    choice: z.array(z.string()).nullable().optional(),
    grammar: z.string().nullable().optional(),
    json_object: z.boolean().nullable().optional(),
    structural_tag: z.unknown().optional(),
  }).nullable().optional().describe("vLLM: exactly one of json, regex, choice, grammar, json_object"),
  guided_json: z.union([z.string(), z.record(z.string(), z.unknown())]).nullable().optional().describe("vLLM before 0.12: a JSON schema"),
  guided_regex: z.string().nullable().optional(),
  guided_choice: z.array(z.string()).nullable().optional(),
  guided_grammar: z.string().nullable().optional(),
  grammar: z.string().nullable().optional().describe("llama-server: a raw GBNF grammar, root rule `root`"),
};

const schemaOf = (value: string | Record<string, unknown>, field: string): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    throw badRequest(`${field} must be a JSON schema (an object or a JSON string of one)`, field);
  }
};

type Body = { [K in keyof typeof structuredOutputFields]?: z.infer<(typeof structuredOutputFields)[K]> };

function fromResponseFormat(format: NonNullable<Body["response_format"]>): OutputConstraint | undefined {
  switch (format.type) {
    case "text":
      return undefined;
    case "json_object":
      // llama-server and LM Studio take a schema right here.
      return format.schema !== undefined ? { type: "json_schema", schema: format.schema } : { type: "json_object" };
    case "json_schema": {
      const spec = format.json_schema as { schema?: unknown } | undefined;
      if (!spec || typeof spec !== "object" || spec.schema === undefined) throw badRequest("response_format.json_schema.schema is required", "response_format");
      return { type: "json_schema", schema: spec.schema };
    }
    default:
      throw badRequest(`response_format type "${format.type}" is not supported; use "text", "json_object" or "json_schema"`, "response_format");
  }
}

function fromStructuredOutputs(spec: NonNullable<Body["structured_outputs"]>): OutputConstraint[] {
  if (spec.structural_tag != null) throw badRequest("structured_outputs.structural_tag is not supported", "structured_outputs");
  const found: OutputConstraint[] = [];
  if (spec.json != null) found.push({ type: "json_schema", schema: schemaOf(spec.json, "structured_outputs.json") });
  if (spec.regex != null) found.push({ type: "regex", pattern: spec.regex });
  if (spec.choice != null) found.push({ type: "choice", choices: spec.choice });
  if (spec.grammar != null) found.push({ type: "grammar", grammar: spec.grammar });
  if (spec.json_object) found.push({ type: "json_object" });
  if (found.length > 1) throw badRequest("You can only use one kind of constraints for structured outputs ('json', 'regex', 'choice', 'grammar' or 'json_object').", "structured_outputs");
  return found;
}

/** The one constraint a body asks for, if any. */
export function outputConstraintOf(body: Body): OutputConstraint | undefined {
  const found: Array<[string, OutputConstraint]> = [];
  if (body.response_format) {
    const constraint = fromResponseFormat(body.response_format);
    if (constraint) found.push(["response_format", constraint]);
  }
  if (body.structured_outputs) for (const c of fromStructuredOutputs(body.structured_outputs)) found.push(["structured_outputs", c]);
  if (body.guided_json != null) found.push(["guided_json", { type: "json_schema", schema: schemaOf(body.guided_json, "guided_json") }]);
  if (body.guided_regex != null) found.push(["guided_regex", { type: "regex", pattern: body.guided_regex }]);
  if (body.guided_choice != null) found.push(["guided_choice", { type: "choice", choices: body.guided_choice }]);
  if (body.guided_grammar != null) found.push(["guided_grammar", { type: "grammar", grammar: body.guided_grammar }]);
  if (body.grammar != null) found.push(["grammar", { type: "grammar", grammar: body.grammar }]);
  if (found.length > 1) throw badRequest(`Only one output constraint may be given; got ${found.map(([field]) => field).join(" and ")}`, found[1]![0]);
  return found[0]?.[1];
}
