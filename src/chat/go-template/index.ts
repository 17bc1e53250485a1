// Go's text/template language, as Ollama's TEMPLATE uses it: lexer, parser and executor of our own.
export { GoTemplate } from "./template.ts";
export { BUILTIN_FUNCTIONS, type TemplateFunction } from "./functions.ts";
export { TemplateSyntaxError, TemplateExecutionError, TemplateValueError, TemplateLimitError } from "./errors.ts";
export { DEFAULT_TEMPLATE_LIMITS, type TemplateLimits } from "./executor.ts";
export { goStruct, withMethods, isGoStruct, toGoJson, formatValue, type GoStruct, type GoStructOptions } from "./values.ts";
export type { OutputPart } from "./executor.ts";
export type { Node, BranchNode, Operand, Pipeline, Command, TemplateTree } from "./ast.ts";
export {
  renderOllamaPrompt,
  renderOllamaPromptParts,
  goTemplateCapabilities,
  DEFAULT_OLLAMA_TEMPLATE,
  type OllamaPromptInput,
  type ThinkSetting,
} from "./ollama-prompt.ts";
