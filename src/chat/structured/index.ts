// Structured output: grammars that constrain what a model writes (JSON Schema, regex, choices, tool calls).
export { StructuredOutputError } from "./errors.ts";
export { jsonSchemaToGbnf, jsonObjectGbnf, type JsonGrammarOptions } from "./json-schema-grammar.ts";
export { regexToGbnf } from "./regex-grammar.ts";
export { toolCallGrammar, chosenTools, type ToolCallGrammarRequest } from "./tool-call-grammar.ts";
export { constraintGrammar, type OutputConstraint } from "./constraint.ts";
