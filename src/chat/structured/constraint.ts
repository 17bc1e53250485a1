// The output constraints requests ask for, in one internal shape, and the grammar each one becomes.
// Profiles translate their fields (response_format, format, structured_outputs, guided_*, grammar) into it.
import { alternatives, literal } from "./gbnf.ts";
import { jsonObjectGbnf, jsonSchemaToGbnf } from "./json-schema-grammar.ts";
import { regexToGbnf } from "./regex-grammar.ts";
import { StructuredOutputError } from "./errors.ts";

export type OutputConstraint =
  | { type: "json_object" }
  | { type: "json_schema"; schema: unknown }
  | { type: "regex"; pattern: string }
  | { type: "choice"; choices: string[] }
  /** Raw GBNF, root rule `root`. */
  | { type: "grammar"; grammar: string };

export function constraintGrammar(constraint: OutputConstraint): string {
  switch (constraint.type) {
    case "json_object":
      return jsonObjectGbnf();
    case "json_schema":
      return jsonSchemaToGbnf(constraint.schema);
    case "regex":
      return `root ::= ${regexToGbnf(constraint.pattern, "text")}\n`;
    case "choice":
      if (constraint.choices.length === 0) throw new StructuredOutputError("choice must list at least one option");
      return `root ::= ${alternatives(constraint.choices.map(literal))}\n`;
    case "grammar":
      if (!constraint.grammar.trim()) throw new StructuredOutputError("grammar must not be empty");
      return constraint.grammar;
  }
}
