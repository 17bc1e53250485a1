// Which call syntax a chat template teaches its model, recognised from the template's text.
import type { ToolCallSyntax } from "./formats.ts";

/**
 * The call syntax a chat template teaches its model, when it shows one. LFM2's templates are recognised
 * as llama.cpp does: the original ones list tools between `<|tool_list_start|>` and `<|tool_list_end|>`
 * and never write `<|tool_call_start|>`; LFM2.5's write `List of tools: [` without those tokens.
 */
export function toolCallSyntaxOfTemplate(template: string | undefined): ToolCallSyntax | undefined {
  if (!template) return undefined;
  if (template.includes("<|tool_call_start|>")) return "lfm2";
  if (template.includes("<|tool_list_start|>") && template.includes("<|tool_list_end|>")) return "lfm2";
  if (template.includes("List of tools: [")) return "lfm2";
  if (template.includes("<tool_call>")) return "hermes";
  return undefined;
}

/** The server's --tool-call-parser wins (its "none": no syntax); then the template's syntax; Hermes is the common default. */
export function toolCallSyntax(template: string | undefined, parser: ToolCallSyntax | "none" | undefined): ToolCallSyntax | undefined {
  if (parser === "none") return undefined;
  return parser ?? toolCallSyntaxOfTemplate(template) ?? "hermes";
}

