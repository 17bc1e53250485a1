// Modelfiles: parse one into instructions, fold them into a model definition, print a model back.
export { parseModelfile } from "./parser.ts";
export { modelDefinition } from "./definition.ts";
export { formatModelfile, quoteValue, type ModelfileContent } from "./format.ts";
export { ModelfileSyntaxError } from "./errors.ts";
export {
  PARAMETER_TYPES,
  DEPRECATED_PARAMETERS,
  isParameterName,
  parseParameterValue,
  parameterProblems,
  type ParameterType,
  type ParameterValue,
} from "./parameters.ts";
export type { Modelfile, ModelfileCommand, ModelDefinition, ModelMessage, MessageRole, TextInstruction } from "./types.ts";
