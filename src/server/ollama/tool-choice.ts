// tool_choice on /api/chat is llamux's extension: Ollama has no such field and serves the request as if
// it were absent. So a tool_choice llamux cannot honour (an unknown shape, a named tool that is not
// declared, a forced call without tools or beside `format`) is ignored with a warning, never an error.
import { parseToolChoice, type ToolCallParserName, type ToolChoice } from "../../generation/chat-output.ts";
import type { ToolDefinition } from "../../chat/types.ts";
import { logger } from "../../log.ts";

const log = logger("ollama");

export interface ToolChoiceContext {
  tools: ToolDefinition[];
  /** The request constrains its output (`format`). */
  constrained: boolean;
  parser?: ToolCallParserName | undefined;
}

/** Why a forced choice cannot be honoured for this request, if it cannot. */
function unusable(choice: ToolChoice, context: ToolChoiceContext): string | undefined {
  if (choice === "auto" || choice === "none") return undefined;
  if (context.tools.length === 0) return "the request declares no tools";
  if (typeof choice === "object" && !context.tools.some((tool) => tool.function.name === choice.name)) return `no declared tool is named "${choice.name}"`;
  if (context.constrained) return "format constrains the reply";
  if (context.parser === "none") return "the server reads no tool calls (--tool-call-parser none)";
  return undefined;
}

/** The tool_choice to honour, or undefined (as Ollama, which ignores the field). */
export function ollamaToolChoice(value: unknown, context: ToolChoiceContext): ToolChoice | undefined {
  let choice: ToolChoice | undefined;
  try {
    choice = parseToolChoice(value);
  } catch (error) {
    log.warn(`ignored tool_choice ${JSON.stringify(value)?.slice(0, 200)}: ${(error as Error).message}`);
    return undefined;
  }
  if (choice === undefined) return undefined;
  const reason = unusable(choice, context);
  if (reason) {
    log.warn(`ignored tool_choice ${JSON.stringify(value).slice(0, 200)}: ${reason}`);
    return undefined;
  }
  return choice;
}
