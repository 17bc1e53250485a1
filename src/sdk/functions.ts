// A function the model may call (the spec's LeapFunction) and its parameters: name checks at
// registration, and the tool definition (JSON Schema) the chat template shows the model.
import type { ToolDefinition } from "../chat/types.ts";
import { isLeapType, type JsonSchema, type LeapFunctionParameterType } from "./function-types.ts";

export interface LeapFunctionParameterInit {
  name: string;
  type: LeapFunctionParameterType;
  description: string;
  /** @default false */
  optional?: boolean;
}

export class LeapFunctionParameter {
  readonly name: string;
  readonly type: LeapFunctionParameterType;
  readonly description: string;
  readonly optional: boolean;

  constructor(init: LeapFunctionParameterInit) {
    this.name = init.name;
    this.type = init.type;
    this.description = init.description ?? "";
    this.optional = init.optional ?? false;
  }

  /** The parameter's own description replaces the description of its type. */
  toJsonSchema(): JsonSchema {
    return { ...this.type.toJsonSchema(false), description: this.description };
  }
}

export interface LeapFunctionInit {
  name: string;
  description: string;
  parameters: Array<LeapFunctionParameter | LeapFunctionParameterInit>;
}

const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Thrown by registerFunction for a definition the model could not be shown or could not call. */
export class InvalidFunctionError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "InvalidFunctionError";
  }
}

/** Letters, digits and underscores, not starting with a digit. */
export function checkFunctionName(name: unknown): void {
  if (typeof name !== "string" || !FUNCTION_NAME.test(name)) {
    throw new InvalidFunctionError(`Cannot register function ${JSON.stringify(name)}: a name has only letters, digits and underscores, and does not start with a digit`);
  }
}

export class LeapFunction {
  readonly name: string;
  readonly description: string;
  readonly parameters: LeapFunctionParameter[];

  constructor(init: LeapFunctionInit) {
    checkFunctionName(init?.name);
    if (!Array.isArray(init.parameters)) throw new InvalidFunctionError(`Cannot register function "${init.name}": parameters must be a list`);
    this.name = init.name;
    this.description = init.description ?? "";
    this.parameters = init.parameters.map((p, i) => {
      if (typeof p?.name !== "string" || !p.name) throw new InvalidFunctionError(`Cannot register function "${init.name}": parameter ${i} has no name`);
      if (!isLeapType(p.type)) throw new InvalidFunctionError(`Cannot register function "${init.name}": parameter "${p.name}" needs a type such as new LeapStr()`);
      return p instanceof LeapFunctionParameter ? p : new LeapFunctionParameter(p);
    });
    const names = this.parameters.map((p) => p.name);
    const repeated = names.find((name, i) => names.indexOf(name) !== i);
    if (repeated) throw new InvalidFunctionError(`Cannot register function "${init.name}": parameter "${repeated}" is declared twice`);
  }

  /** The function as a chat-template tool: an object schema of its parameters, the non-optional ones required. */
  toToolDefinition(): ToolDefinition & { function: { parameters: JsonSchema } } {
    return {
      type: "function",
      function: {
        name: this.name,
        description: this.description,
        parameters: {
          type: "object",
          properties: Object.fromEntries(this.parameters.map((p) => [p.name, p.toJsonSchema()])),
          required: this.parameters.filter((p) => !p.optional).map((p) => p.name),
        },
      },
    };
  }
}

/** A class instance as is; a plain object of the same shape checked and wrapped. */
export function toLeapFunction(fn: LeapFunction | LeapFunctionInit): LeapFunction {
  if (typeof fn !== "object" || fn === null) throw new InvalidFunctionError("Cannot register function: give a LeapFunction or an object { name, description, parameters }");
  return fn instanceof LeapFunction ? fn : new LeapFunction(fn);
}
