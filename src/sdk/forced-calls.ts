// The grammar that forces function calls (toolChoice "required" or { name }) in the model's own call
// syntax, and how that syntax is told from the model's chat template.
import type { ToolDefinition } from "../chat/types.ts";
import { TOOL_CALL_FORMATS, type ToolCallSyntax } from "../chat/tool-calls/formats.ts";

/** The call syntax a chat template teaches its model; `fallback` when the template shows none. */
export function callSyntaxOfTemplate(template: string | undefined, fallback: ToolCallSyntax): ToolCallSyntax {
  if (template?.includes(TOOL_CALL_FORMATS.lfm2.start)) return "lfm2";
  if (template?.includes(TOOL_CALL_FORMATS.hermes.start)) return "hermes";
  return fallback;
}

/** A forced choice that names a function not registered. */
export class UnknownToolChoiceError extends TypeError {
  constructor(name: string) {
    super(`Cannot force a call of "${name}": no function of that name is registered`);
    this.name = "UnknownToolChoiceError";
  }
}

// Interim grammar until the shared tool-call grammar (src/chat/structured) lands on main: one call of a
// chosen tool with its required arguments, values kept short so random weights still finish.
const lit = (text: string) => JSON.stringify(text);

function valueRule(schema: Record<string, unknown>, python: boolean): string {
  if (Array.isArray(schema.enum)) return `(${schema.enum.map((v) => lit(python && typeof v === "boolean" ? (v ? "True" : "False") : JSON.stringify(v))).join(" | ")})`;
  switch (schema.type) {
    case "string": return `"\\"" [a-z]{1,8} "\\""`;
    case "integer": return `[1-9] [0-9]{0,3}`;
    case "number": return `[1-9] [0-9]{0,3} ("." [0-9]{1,2})?`;
    case "boolean": return python ? `("True" | "False")` : `("true" | "false")`;
    case "null": return python ? `"None"` : `"null"`;
    case "array": return `"[" (${valueRule((schema.items ?? {}) as Record<string, unknown>, python)} (", " ${valueRule((schema.items ?? {}) as Record<string, unknown>, python)}){0,2})? "]"`;
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = (schema.required ?? []) as string[];
      const members = required.map((key) => `${lit(`${JSON.stringify(key)}: `)} ${valueRule(properties[key] ?? {}, python)}`);
      return members.length ? `"{" ${members.join(' ", " ')} "}"` : `"{}"`;
    }
    default: return `"\\"" [a-z]{1,8} "\\""`;
  }
}

function callRule(tool: ToolDefinition, syntax: ToolCallSyntax): string {
  const parameters = (tool.function.parameters ?? {}) as Record<string, unknown>;
  const properties = (parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = (parameters.required ?? []) as string[];
  if (syntax === "hermes") {
    const members = required.map((key) => `${lit(`${JSON.stringify(key)}: `)} ${valueRule(properties[key] ?? {}, false)}`);
    return `${lit(`{"name": ${JSON.stringify(tool.function.name)}, "arguments": {`)} ${members.length ? `${members.join(' ", " ')} ` : ""}"}}"`;
  }
  const members = required.map((key) => `${lit(`${key}=`)} ${valueRule(properties[key] ?? {}, true)}`);
  return `${lit(`${tool.function.name}(`)} ${members.length ? `${members.join(' ", " ')} ` : ""}")"`;
}

/** A GBNF grammar (root rule `root`) whose sentences are calls of the chosen tools in `syntax`. */
export function forcedCallGrammar(tools: ToolDefinition[], syntax: ToolCallSyntax, choice: "required" | { name: string }): string {
  const chosen = choice === "required" ? tools : tools.filter((t) => t.function.name === choice.name);
  if (typeof choice === "object" && chosen.length === 0) throw new UnknownToolChoiceError(choice.name);
  if (chosen.length === 0) throw new TypeError('Cannot force a function call: toolChoice "required" needs at least one registered function');
  const call = `(${chosen.map((tool) => callRule(tool, syntax)).join(" | ")})`;
  const format = TOOL_CALL_FORMATS[syntax];
  if (syntax === "hermes") return `root ::= ${lit(`${format.start}\n`)} ${call} ${lit(`\n${format.end}`)}`;
  const list = `"[" ${call} "]"`;
  return `root ::= ${syntax === "lfm2" ? `${lit(format.start)} ${list} ${lit(format.end!)}` : list}`;
}
