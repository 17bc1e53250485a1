// The options a Modelfile may set with PARAMETER (Ollama's api.Options), each with its type, and the
// parsing of a PARAMETER value into that type with Go's strconv rules.

export type ParameterType = "int" | "float" | "bool" | "strings";
export type ParameterValue = number | boolean | string[];

export const PARAMETER_TYPES: Readonly<Record<string, ParameterType>> = {
  num_ctx: "int",
  num_predict: "int",
  num_keep: "int",
  temperature: "float",
  top_k: "int",
  top_p: "float",
  min_p: "float",
  typical_p: "float",
  repeat_last_n: "int",
  repeat_penalty: "float",
  presence_penalty: "float",
  frequency_penalty: "float",
  seed: "int",
  stop: "strings",
  num_batch: "int",
  num_gpu: "int",
  main_gpu: "int",
  use_mmap: "bool",
  num_thread: "int",
  draft_num_predict: "int",
};

/** Names Ollama removed but still reads in old Modelfiles: a warning, not an error. */
export const DEPRECATED_PARAMETERS: ReadonlySet<string> = new Set([
  "penalize_newline",
  "low_vram",
  "f16_kv",
  "logits_all",
  "vocab_only",
  "use_mlock",
  "mirostat",
  "mirostat_tau",
  "mirostat_eta",
]);

export function isParameterName(name: string): boolean {
  return Object.hasOwn(PARAMETER_TYPES, name);
}

const INT_PATTERN = /^[+-]?\d+$/;
const FLOAT_PATTERN = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/**
 * The typed value of one PARAMETER line; throws RangeError with the reason when the text does not fit
 * the type. A `stop` value is one string of the list (lines accumulate).
 */
export function parseParameterValue(name: string, text: string): ParameterValue {
  const type = PARAMETER_TYPES[name];
  if (type === undefined) throw new RangeError(`unknown parameter "${name}"`);
  switch (type) {
    case "int": {
      const value = Number(text);
      if (!INT_PATTERN.test(text) || !Number.isSafeInteger(value)) throw new RangeError(`invalid integer value "${text}" for parameter "${name}"`);
      return value;
    }
    case "float": {
      if (!FLOAT_PATTERN.test(text)) throw new RangeError(`invalid number value "${text}" for parameter "${name}"`);
      return Number(text);
    }
    case "bool":
      if (TRUE_WORDS.has(text)) return true;
      if (FALSE_WORDS.has(text)) return false;
      throw new RangeError(`invalid boolean value "${text}" for parameter "${name}" (use true or false)`);
    case "strings":
      return [text];
  }
}

/**
 * Checks a parameters object (a params layer, an API request) against the table: each known name with
 * a value of its type. Returns the problems, empty when all is well.
 */
export function parameterProblems(parameters: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    const type = PARAMETER_TYPES[name];
    if (type === undefined) problems.push(`unknown parameter "${name}"`);
    else if (!valueHasType(value, type)) problems.push(`parameter "${name}" must be of type ${type === "strings" ? "array of strings" : type}`);
  }
  return problems;
}

function valueHasType(value: unknown, type: ParameterType): boolean {
  switch (type) {
    case "int":
      return Number.isSafeInteger(value);
    case "float":
      return typeof value === "number" && Number.isFinite(value);
    case "bool":
      return typeof value === "boolean";
    case "strings":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
  }
}
