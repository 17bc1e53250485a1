// The parameter types of a registered function (the spec's LeapStr … LeapNull) and their JSON Schema.
// A type's own `description` shows only where the type is nested (an array's items, an object's
// properties); used directly as a parameter's type, the parameter's description replaces it.

export type JsonSchema = Record<string, unknown>;

abstract class LeapType {
  abstract readonly kind: "string" | "number" | "integer" | "boolean" | "array" | "object" | "null";
  readonly description: string | undefined;

  protected constructor(description: string | undefined) {
    this.description = description;
  }

  /** The JSON Schema of this type; `withDescription` is false when a parameter's description replaces it. */
  toJsonSchema(withDescription = true): JsonSchema {
    const schema: JsonSchema = { type: this.kind, ...this.fields() };
    if (withDescription && this.description !== undefined) schema.description = this.description;
    return schema;
  }

  protected fields(): JsonSchema {
    return {};
  }
}

function enumField<T>(values: readonly T[] | undefined): JsonSchema {
  return values !== undefined ? { enum: [...values] } : {};
}

export class LeapStr extends LeapType {
  readonly kind = "string";
  readonly enumValues: string[] | undefined;
  constructor(options: { enumValues?: string[]; description?: string } = {}) {
    super(options.description);
    this.enumValues = options.enumValues;
  }
  protected override fields(): JsonSchema {
    return enumField(this.enumValues);
  }
}

export class LeapNum extends LeapType {
  readonly kind = "number";
  readonly enumValues: number[] | undefined;
  constructor(options: { enumValues?: number[]; description?: string } = {}) {
    super(options.description);
    this.enumValues = options.enumValues;
  }
  protected override fields(): JsonSchema {
    return enumField(this.enumValues);
  }
}

export class LeapInt extends LeapType {
  readonly kind = "integer";
  readonly enumValues: number[] | undefined;
  constructor(options: { enumValues?: number[]; description?: string } = {}) {
    super(options.description);
    if (options.enumValues?.some((value) => !Number.isInteger(value))) throw new TypeError(`Cannot create LeapInt: enumValues must be integers, got ${JSON.stringify(options.enumValues)}`);
    this.enumValues = options.enumValues;
  }
  protected override fields(): JsonSchema {
    return enumField(this.enumValues);
  }
}

export class LeapBool extends LeapType {
  readonly kind = "boolean";
  constructor(options: { description?: string } = {}) {
    super(options.description);
  }
}

export class LeapArr extends LeapType {
  readonly kind = "array";
  readonly itemType: LeapFunctionParameterType;
  constructor(options: { itemType: LeapFunctionParameterType; description?: string }) {
    super(options?.description);
    if (!(options?.itemType instanceof LeapType)) throw new TypeError("Cannot create LeapArr: itemType must be a Leap parameter type such as new LeapStr()");
    this.itemType = options.itemType;
  }
  protected override fields(): JsonSchema {
    return { items: this.itemType.toJsonSchema(true) };
  }
}

export class LeapObj extends LeapType {
  readonly kind = "object";
  readonly properties: Record<string, LeapFunctionParameterType>;
  readonly required: string[];
  constructor(options: { properties: Record<string, LeapFunctionParameterType>; required?: string[]; description?: string }) {
    super(options?.description);
    const properties = options?.properties;
    if (typeof properties !== "object" || properties === null) throw new TypeError("Cannot create LeapObj: properties must map names to Leap parameter types");
    for (const [name, type] of Object.entries(properties)) {
      if (!(type instanceof LeapType)) throw new TypeError(`Cannot create LeapObj: property "${name}" is not a Leap parameter type`);
    }
    const required = options.required ?? [];
    const unknown = required.filter((name) => !(name in properties));
    if (unknown.length > 0) throw new TypeError(`Cannot create LeapObj: required names unknown properties ${unknown.map((n) => `"${n}"`).join(", ")}`);
    this.properties = { ...properties };
    this.required = [...required];
  }
  protected override fields(): JsonSchema {
    const properties = Object.fromEntries(Object.entries(this.properties).map(([name, type]) => [name, type.toJsonSchema(true)]));
    return { properties, required: [...this.required] };
  }
}

export class LeapNull extends LeapType {
  readonly kind = "null";
  constructor() {
    super(undefined);
  }
}

export type LeapFunctionParameterType = LeapStr | LeapNum | LeapInt | LeapBool | LeapArr | LeapObj | LeapNull;

export function isLeapType(value: unknown): value is LeapFunctionParameterType {
  return value instanceof LeapType;
}
