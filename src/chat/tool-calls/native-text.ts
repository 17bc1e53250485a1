// Writes calls back in a format's own text, the way the model would have written them: for templates
// that do not render an assistant message's `tool_calls`, the model then still sees its own calls.
import type { ToolCallFormat } from "./formats.ts";

export interface NativeCall {
  name: string;
  /** An object, or a JSON string of one (the OpenAI wire form); a string that is not JSON is written as given. */
  arguments: Record<string, unknown> | string;
}

/** A value as a Python literal: JSON, except True/False/None. */
export function pythonLiteral(value: unknown): string {
  if (value === true) return "True";
  if (value === false) return "False";
  if (value === null || value === undefined) return "None";
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${pythonLiteral(item)}`).join(", ")}}`;
  }
  return JSON.stringify(value);
}

function argumentsObject(args: NativeCall["arguments"]): Record<string, unknown> | string {
  if (typeof args !== "string") return args;
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : args;
  } catch {
    return args;
  }
}

function pythonicCall(call: NativeCall): string {
  const args = argumentsObject(call.arguments);
  const written = typeof args === "string" ? args : Object.entries(args).map(([name, value]) => `${name}=${pythonLiteral(value)}`).join(", ");
  return `${call.name}(${written})`;
}

function jsonCall(call: NativeCall): string {
  const args = argumentsObject(call.arguments);
  return `{"name": ${JSON.stringify(call.name)}, "arguments": ${typeof args === "string" ? args : JSON.stringify(args)}}`;
}

/** The calls as the model writes them in `format`, e.g. `<|tool_call_start|>[f(a=1)]<|tool_call_end|>`. */
export function nativeCallText(format: ToolCallFormat, calls: NativeCall[]): string {
  if (calls.length === 0) return "";
  switch (format.syntax) {
    case "lfm2":
      return `${format.start}[${calls.map(pythonicCall).join(", ")}]${format.end}`;
    case "pythonic":
      return `[${calls.map(pythonicCall).join(", ")}]`;
    case "hermes":
      return calls.map((call) => `${format.start}\n${jsonCall(call)}\n${format.end}`).join("\n");
  }
}
