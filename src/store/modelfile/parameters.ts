// The options a Modelfile may set with PARAMETER are the option table's Ollama names (src/options): the
// parsing of a PARAMETER value into its type with Go's strconv rules, and the check of a parameters
// object (a params layer, an API request) against the table.
import { checkOllamaOption, ollamaKindOf, ollamaOptionKey, ollamaOptionNames } from "../../options/ollama-names.ts";
import { checkKind, OptionError } from "../../options/check-value.ts";
import type { OptionKind } from "../../options/table.ts";
import { REMOVED_OLLAMA_OPTIONS } from "../../options/table.ts";

export type ParameterType = OptionKind;
export type ParameterValue = number | boolean | string[];

/** Each PARAMETER name with its type. */
export const PARAMETER_TYPES: Readonly<Record<string, ParameterType>> = Object.fromEntries(ollamaOptionNames().map((name) => [name, ollamaKindOf(name)!]));

/** Names Ollama removed but still reads in old Modelfiles: a warning, not an error. */
export const DEPRECATED_PARAMETERS: ReadonlySet<string> = new Set([...REMOVED_OLLAMA_OPTIONS].flatMap(([name, removed]) => (removed.modelfile === "warn" ? [name] : [])));

export function isParameterName(name: string): boolean {
  return ollamaOptionKey(name) !== undefined;
}

const INT_PATTERN = /^[+-]?\d+$/;
const FLOAT_PATTERN = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

function typedValue(name: string, text: string): ParameterValue {
  switch (ollamaKindOf(name)) {
    case undefined:
      throw new RangeError(`unknown parameter "${name}"`);
    case "int": {
      const value = Number(text);
      if (!INT_PATTERN.test(text) || !Number.isSafeInteger(value)) throw new RangeError(`invalid integer value "${text}" for parameter "${name}"`);
      return value;
    }
    case "float":
      if (!FLOAT_PATTERN.test(text)) throw new RangeError(`invalid number value "${text}" for parameter "${name}"`);
      return Number(text);
    case "bool":
      if (TRUE_WORDS.has(text)) return true;
      if (FALSE_WORDS.has(text)) return false;
      throw new RangeError(`invalid boolean value "${text}" for parameter "${name}" (use true or false)`);
    case "strings":
    case "ints":
    case "bias":
      return [text];
  }
}

/**
 * The typed value of one PARAMETER line; throws RangeError with the reason when the text does not fit
 * the type or the table's range. A list value is one entry of the list (lines accumulate).
 */
export function parseParameterValue(name: string, text: string): ParameterValue {
  const value = typedValue(name, text);
  if (!Array.isArray(value)) {
    try {
      checkOllamaOption(name, value, name);
    } catch (error) {
      if (error instanceof OptionError) throw new RangeError(`invalid value "${text}" for parameter "${name}": ${error.message}`);
      throw error;
    }
  }
  return value;
}

const TYPE_WORDS = { int: "int", float: "float", bool: "bool", strings: "array of strings", ints: "array of integers", bias: "object" } as const;

/**
 * Checks a parameters object (a params layer, an API request) against the table: each known name with
 * a value of its type, and in its range where the table checks one on Ollama's surface (XTC, DRY), as a
 * request's options are checked. Returns the problems, empty when all is well.
 */
export function parameterProblems(parameters: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    const key = ollamaOptionKey(name);
    const kind = ollamaKindOf(name);
    if (key === undefined || kind === undefined) problems.push(`unknown parameter "${name}"`);
    // A stored integer is a whole number (a request's may carry a fraction, which Ollama drops).
    else if (kind === "int" ? !Number.isSafeInteger(value) : !checkKind(key, value)) problems.push(`parameter "${name}" must be of type ${TYPE_WORDS[kind]}`);
    else {
      try {
        checkOllamaOption(name, value, name);
      } catch (error) {
        if (!(error instanceof OptionError)) throw error;
        problems.push(`parameter "${name}" must be ${error.rule}, got ${JSON.stringify(value)}`);
      }
    }
  }
  return problems;
}
