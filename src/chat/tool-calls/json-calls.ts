// Calls written as JSON objects, `{"name": "f", "arguments": {...}}` (Hermes, and llama.cpp's JSON form
// for LFM2), one object or a list of them.
import { parseLiteral, type PythonicCall } from "./literal-parser.ts";
import { ToolCallSyntaxError } from "./syntax-error.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One call object. `arguments` may also be called `parameters` (several fine-tunes write that), may be a
 * JSON string holding the object (the OpenAI wire form), and may be absent for a call without arguments.
 */
function callOf(value: unknown, text: string): PythonicCall {
  if (!isObject(value)) throw new ToolCallSyntaxError("a call must be a JSON object", text, 0);
  const name = value.name;
  if (typeof name !== "string" || name === "") throw new ToolCallSyntaxError('a call needs a "name" string', text, 0);
  let args: unknown = value.arguments ?? value.parameters ?? {};
  if (typeof args === "string") {
    try {
      args = parseLiteral(args);
    } catch {
      throw new ToolCallSyntaxError(`the arguments of ${name} are a string that is not a JSON object`, text, 0);
    }
  }
  if (!isObject(args)) throw new ToolCallSyntaxError(`the arguments of ${name} must be an object`, text, 0);
  return { name, arguments: args };
}

/** The calls in `text`: one call object, or a non-empty list of them. */
export function parseJsonCalls(text: string): PythonicCall[] {
  const value = parseLiteral(text);
  if (!Array.isArray(value)) return [callOf(value, text)];
  if (value.length === 0) throw new ToolCallSyntaxError("the call list is empty", text, 0);
  return value.map((item) => callOf(item, text));
}
