// The output constraints requests ask for, in one internal shape, and the grammar each one becomes.
// Profiles translate their fields (response_format, format, structured_outputs, guided_*, grammar) into it.
import { choiceGrammar } from "./choice-grammar.ts";
import { jsonObjectGbnf, jsonSchemaToGbnf } from "./json-schema-grammar.ts";
import { regexToGbnf } from "./regex-grammar.ts";
import { StructuredOutputError } from "./errors.ts";
import { checkGrammarBounds } from "./grammar-bounds.ts";

export type OutputConstraint =
  | { type: "json_object" }
  | { type: "json_schema"; schema: unknown }
  | { type: "regex"; pattern: string }
  | { type: "choice"; choices: string[] }
  /** Raw GBNF, root rule `root`. */
  | { type: "grammar"; grammar: string };

/** The grammar of a constraint, within DEFAULT_GRAMMAR_LIMITS (else a StructuredOutputError). */
export function constraintGrammar(constraint: OutputConstraint): string {
  const grammar = unboundedGrammar(constraint);
  checkGrammarBounds(grammar);
  return grammar;
}

function unboundedGrammar(constraint: OutputConstraint): string {
  switch (constraint.type) {
    case "json_object":
      return jsonObjectGbnf();
    case "json_schema":
      return jsonSchemaToGbnf(constraint.schema);
    case "regex":
      return `root ::= ${regexToGbnf(constraint.pattern, "text")}\n`;
    case "choice":
      if (constraint.choices.length === 0) throw new StructuredOutputError("choice must list at least one option");
      return `root ::= ${choiceGrammar(constraint.choices)}\n`;
    case "grammar":
      if (!constraint.grammar.trim()) throw new StructuredOutputError("grammar must not be empty");
      return constraint.grammar;
  }
}
