// Checks a call the model made against the function it names (step 2 of the tool-call flow): random or
// small models may leave out arguments, pass the wrong type or a value outside an enum.
import type { LeapFunctionParameterType } from "./function-types.ts";
import type { LeapFunction, LeapFunctionInit } from "./functions.ts";
import { toLeapFunction } from "./functions.ts";

/** A call as the model made it. */
export interface LeapFunctionCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The call's id where the backend gives one (OpenAI-compatible servers). */
  id?: string;
}

const describe = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`);

function checkValue(type: LeapFunctionParameterType, value: unknown, path: string, problems: string[]): void {
  const wrong = (expected: string) => problems.push(`${path} must be ${expected}, got ${describe(value)}`);
  switch (type.kind) {
    case "string":
    case "number":
    case "integer": {
      const ok = type.kind === "string" ? typeof value === "string"
        : type.kind === "number" ? typeof value === "number" && Number.isFinite(value)
        : typeof value === "number" && Number.isInteger(value);
      if (!ok) return void wrong(type.kind === "integer" ? "an integer" : `a ${type.kind}`);
      const allowed = type.enumValues as unknown[] | undefined;
      if (allowed && !allowed.includes(value)) problems.push(`${path} must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}, got ${JSON.stringify(value)}`);
      return;
    }
    case "boolean":
      if (typeof value !== "boolean") wrong("a boolean");
      return;
    case "null":
      if (value !== null) wrong("null");
      return;
    case "array":
      if (!Array.isArray(value)) return void wrong("an array");
      value.forEach((item, i) => checkValue(type.itemType, item, `${path}[${i}]`, problems));
      return;
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return void wrong("an object");
      const record = value as Record<string, unknown>;
      for (const name of type.required) if (!(name in record)) problems.push(`${path}.${name} is required but missing`);
      for (const [name, item] of Object.entries(record)) {
        const itemType = type.properties[name];
        if (itemType) checkValue(itemType, item, `${path}.${name}`, problems);
        else problems.push(`${path}.${name} is not a declared property`);
      }
    }
  }
}

/**
 * What is wrong with `call` as a call of `fn`: a wrong name, missing required arguments, unknown
 * arguments, wrong types, values outside enumValues (nested ones included). Empty when it is valid.
 * An optional argument may be null (models write None for "not given").
 */
export function validateFunctionCall(fn: LeapFunction | LeapFunctionInit, call: LeapFunctionCall): string[] {
  const definition = toLeapFunction(fn);
  const problems: string[] = [];
  if (call.name !== definition.name) problems.push(`the call names "${call.name}", not "${definition.name}"`);
  const args = call.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return [...problems, `arguments must be an object, got ${describe(args)}`];
  for (const parameter of definition.parameters) {
    if (!(parameter.name in args)) {
      if (!parameter.optional) problems.push(`argument "${parameter.name}" is required but missing`);
      continue;
    }
    const value = args[parameter.name];
    if (parameter.optional && value === null) continue;
    checkValue(parameter.type, value, `argument "${parameter.name}"`, problems);
  }
  for (const name of Object.keys(args)) {
    if (!definition.parameters.some((p) => p.name === name)) problems.push(`argument "${name}" is not a parameter of "${definition.name}"`);
  }
  return problems;
}
