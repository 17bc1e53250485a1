// The grammar that makes a model call tools (tool_choice "required" or a named function): the model's own
// call syntax around calls to declared functions whose arguments satisfy the functions' parameter schemas.
// lfm2: <|tool_call_start|>[f(a="x", b=1)]<|tool_call_end|>; pythonic: [f(a="x")];
// hermes: <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>, one block per call.
// The calls' openings (`{"name": "f", "arguments": ` or `f(`) are one prefix tree, each followed by its
// tool's arguments, so a forced call among hundreds of tools opens one parse stack per distinct next
// character of the names rather than one per tool (a flat alternation is refused past 128).
import type { ToolDefinition } from "../types.ts";
import { TOOL_CALL_FORMATS, type ToolCallSyntax } from "../tool-calls/formats.ts";
import { literal, repeat, RuleSet } from "./gbnf.ts";
import { prefixTreeGrammar, type PrefixTreeEntry } from "./choice-grammar.ts";
import { JsonSchemaGrammar } from "./json-schema-grammar.ts";
import { StructuredOutputError } from "./errors.ts";
import { checkGrammarBounds } from "./grammar-bounds.ts";
import { checkSchemaDepth } from "./nesting.ts";

export interface ToolCallGrammarRequest {
  tools: ToolDefinition[];
  /** The model's call syntax (vLLM's --tool-call-parser names). */
  syntax: ToolCallSyntax;
  /** "required": one or more calls to any of the tools; `{ name }`: exactly one call to that tool. */
  choice: "required" | { name: string };
  /** Allow more than one call (parallel_tool_calls). Default: true. */
  parallel?: boolean;
  /** Most calls in one reply when parallel. Default: 8 (keeps random-weight replies finite). */
  maxCalls?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The tools a tool_choice allows; a name that is not among them is the client's error. */
export function chosenTools(tools: ToolDefinition[], choice: ToolCallGrammarRequest["choice"]): ToolDefinition[] {
  if (choice === "required") return tools;
  const tool = tools.find((t) => t.function.name === choice.name);
  if (!tool) throw new StructuredOutputError("The tool specified in `tool_choice` does not match any of the specified `tools`");
  return [tool];
}

/** A function's parameters as an object schema (a missing or non-object schema means no arguments). */
function parametersOf(tool: ToolDefinition): Record<string, unknown> {
  const parameters = tool.function.parameters;
  // Before the recursive converter, as jsonSchemaToGbnf does.
  checkSchemaDepth(parameters);
  if (!isObject(parameters) || Object.keys(parameters).length === 0) return { type: "object", properties: {}, additionalProperties: false };
  return parameters;
}

/** A JSON call object: {"name": "f", "arguments": {...}}. */
function jsonCall(rules: RuleSet, tool: ToolDefinition): PrefixTreeEntry {
  const name = tool.function.name;
  const parameters = parametersOf(tool);
  const args = new JsonSchemaGrammar(rules, parameters).value(parameters, `#${name}`);
  return { text: `{"name": ${JSON.stringify(name)}, "arguments": `, then: rules.add(`call-${name}-arguments`, `${args} "}"`) };
}

/** A pythonic call: f(a="x", b=1), keyword arguments in the schema's order. */
function pythonicCall(rules: RuleSet, tool: ToolDefinition): PrefixTreeEntry {
  const name = tool.function.name;
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name)) throw new StructuredOutputError(`Cannot call tool "${name}" in pythonic syntax: the name is not an identifier`);
  const parameters = parametersOf(tool);
  const schemas = new JsonSchemaGrammar(rules, parameters, { literals: "python" });
  const properties = isObject(parameters.properties) ? parameters.properties : {};
  const required = Array.isArray(parameters.required) ? parameters.required : [];
  for (const key of Object.keys(parameters)) {
    if (["type", "properties", "required", "additionalProperties", "$defs", "definitions", "title", "description", "$schema", "$id", "$comment", "examples", "default"].includes(key)) continue;
    throw new StructuredOutputError(`Unsupported JSON schema keyword "${key}" in the parameters of tool "${name}": it cannot be enforced`, key);
  }
  if (parameters.type !== undefined && parameters.type !== "object") throw new StructuredOutputError(`The parameters of tool "${name}" must be an object schema`, "type");
  for (const key of Object.keys(properties)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new StructuredOutputError(`Cannot call tool "${name}" in pythonic syntax: parameter "${key}" is not an identifier`);
  }
  const members = Object.entries(properties).map(([key, schema]) => ({
    required: required.includes(key),
    text: `${literal(`${key}=`)} ${schemas.value(schema, `#${name}/${key}`)}`,
  }));
  const additional = parameters.additionalProperties;
  const extra = additional !== undefined && additional !== false
    ? `[A-Za-z_] [A-Za-z0-9_]{0,31} "=" ${schemas.value(additional, `#${name}/additionalProperties`)}` : undefined;
  const list = schemas.memberList(members, extra, `${name}-args`, '", "');
  return { text: `${name}(`, then: rules.add(`call-${name}-arguments`, `${list ? `${list} ` : ""}")"`) };
}

/** One call to any of the tools: their openings as a prefix tree, each followed by its arguments. */
function anyCall(rules: RuleSet, entries: PrefixTreeEntry[]): string {
  return rules.add("call", prefixTreeGrammar(entries, { what: "the tool names", keyword: "tools" }));
}

/** A GBNF grammar (root rule `root`) whose every sentence is a well-formed call block of the chosen tools. */
export function toolCallGrammar(request: ToolCallGrammarRequest): string {
  const grammar = unboundedToolCallGrammar(request);
  // Here, before any model loads, so that a tool list past a bound is the request's 400.
  checkGrammarBounds(grammar);
  return grammar;
}

function unboundedToolCallGrammar(request: ToolCallGrammarRequest): string {
  const tools = chosenTools(request.tools, request.choice);
  if (tools.length === 0) throw new StructuredOutputError("tool_choice requires at least one tool in `tools`");
  const rules = new RuleSet();
  const single = request.choice !== "required" || request.parallel === false;
  const extraCalls = single ? 0 : Math.max(0, (request.maxCalls ?? 8) - 1);
  const format = TOOL_CALL_FORMATS[request.syntax];
  if (request.syntax === "hermes") {
    const call = anyCall(rules, tools.map((tool) => jsonCall(rules, tool)));
    const block = rules.add("call-block", `${literal(`${format.start}\n`)} ${call} ${literal(`\n${format.end}`)}`);
    return rules.toString(`${block} ${repeat(`("\\n" ${block})`, 0, extraCalls)}`.replace(/ ""$/, ""));
  }
  const call = anyCall(rules, tools.map((tool) => pythonicCall(rules, tool)));
  const list = `"[" ${call} ${repeat(`(", " ${call})`, 0, extraCalls)} "]"`.replace(/ "" /, " ");
  return rules.toString(request.syntax === "lfm2" ? `${literal(format.start)} ${list} ${literal(format.end!)}` : list);
}
