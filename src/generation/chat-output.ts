// How a chat request's reply is read and constrained, decided once per request for every profile: which
// tools the template sees, which call syntax the reply is read in, the grammar that tool_choice or a
// structured-output request imposes, and the parser chain (reasoning first, then tool calls).
import { promptOpensReasoning, ReasoningOutput } from "../chat/reasoning.ts";
import type { OutputConstraint } from "../chat/structured/constraint.ts";
import { runOffThread } from "../chat/off-thread/pool.ts";
import { StructuredOutputError } from "../chat/structured/errors.ts";
import { checkSchemaDepth, MAX_SCHEMA_DEPTH } from "../chat/structured/nesting.ts";
import { chosenTools } from "../chat/structured/tool-call-grammar.ts";
import { TOOL_CALL_FORMATS, TOOL_CALL_SYNTAXES, type ToolCallSyntax } from "../chat/tool-calls/formats.ts";
import { toolCallSyntax } from "../chat/tool-calls/template-syntax.ts";
import { ToolCallOutput } from "../chat/tool-calls/tool-call-output.ts";
import type { ToolDefinition } from "../chat/types.ts";
import { ChainedOutput, PlainTextOutput, type OutputParser } from "../chat/output-parser.ts";

/** vLLM's --tool-call-parser values llamux accepts: a syntax, or "none" to read no calls. */
export const TOOL_CALL_PARSER_NAMES = [...TOOL_CALL_SYNTAXES, "none"] as const;
export type ToolCallParserName = (typeof TOOL_CALL_PARSER_NAMES)[number];

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export interface ChatOutputRequest {
  tools?: ToolDefinition[];
  /** Default: "auto" (with tools). */
  toolChoice?: ToolChoice;
  /** Default: true. */
  parallelToolCalls?: boolean;
  /** Split `<think>…</think>` off as reasoning. Default: true. */
  reasoning?: boolean;
  constraint?: OutputConstraint;
  /**
   * Read calls in this syntax rather than the one the grammar writes (the SDK's functionCallParser), or
   * "none" to read no calls (their text stays answer text).
   */
  readCallsAs?: ToolCallSyntax | "none";
}

export interface ChatOutputPlan {
  /** The tools the template renders (none for tool_choice "none"). */
  tools: ToolDefinition[];
  /** Grammar for the sampler, when the reply is constrained. */
  grammar?: string;
  /** The call syntax replies are read in (undefined when no calls are read). */
  syntax?: ToolCallSyntax;
  /** Tool calls are read from the reply: their markers are special tokens, so the output must keep them. */
  readsToolCalls: boolean;
  /** A fresh parser per choice, given the rendered prompt (which may leave the reply inside `<think>`). */
  parser(promptText: string): OutputParser;
}

/**
 * Reads a wire tool_choice: "auto", "none", "required", Chat Completions' {"type": "function", "function":
 * {"name"}} or the flat {"type": "function", "name"} (the Responses API's shape, which the AI SDK's Ollama
 * provider sends).
 */
export function parseToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "auto" || value === "none" || value === "required") return value;
  if (typeof value === "object" && !Array.isArray(value)) {
    const choice = value as { type?: unknown; name?: unknown; function?: { name?: unknown } };
    const name = choice.function !== undefined && choice.function !== null ? choice.function.name : choice.name;
    const typeFits = choice.type === undefined || choice.type === "function";
    if (typeFits && typeof name === "string" && name) return { name };
  }
  throw new StructuredOutputError('tool_choice must be "auto", "none", "required", {"type": "function", "function": {"name": ...}} or {"type": "function", "name": ...}');
}

/**
 * How the reply is read and constrained. The grammar, when there is one, is built off the serving thread
 * (a long tool list or a large schema takes a while).
 */
export async function planChatOutput(request: ChatOutputRequest, template: string | undefined, parserName?: ToolCallParserName): Promise<ChatOutputPlan> {
  const declared = request.tools ?? [];
  // One bound for every tool, before anything walks it (the template, the special-text shield, a grammar).
  declared.forEach((tool, index) => checkSchemaDepth(tool.function.parameters, MAX_SCHEMA_DEPTH, `Cannot use tools[${index}]: its parameters`));
  let choice = request.toolChoice ?? "auto";
  if (choice !== "auto" && choice !== "none" && declared.length === 0) throw new StructuredOutputError("When using `tool_choice`, `tools` must be set.");
  if (declared.length === 0) choice = "none";
  const tools = choice === "none" ? [] : declared;
  const syntax = tools.length ? toolCallSyntax(template, parserName) : undefined;
  const forced = choice === "required" || typeof choice === "object";
  if (forced && !syntax) throw new StructuredOutputError('tool_choice="required" or a named tool needs a tool-call parser (the server runs with --tool-call-parser none)');
  if (forced && request.constraint) throw new StructuredOutputError("tool_choice that forces a call cannot be combined with a structured-output constraint");
  if (typeof choice === "object") chosenTools(tools, choice);
  const parallel = request.parallelToolCalls ?? true;
  let grammar: string | undefined;
  if (forced) grammar = await runOffThread("grammar", { kind: "tools", request: { tools, syntax: syntax!, choice: choice as "required" | { name: string }, parallel } });
  else if (request.constraint) grammar = await runOffThread("grammar", { kind: "constraint", constraint: request.constraint });
  const readSyntax = request.readCallsAs === "none" ? undefined : tools.length ? request.readCallsAs ?? syntax : undefined;
  const readsToolCalls = readSyntax !== undefined;
  const single = !parallel || typeof choice === "object";
  return {
    tools,
    ...(grammar !== undefined ? { grammar } : {}),
    ...(syntax !== undefined ? { syntax } : {}),
    readsToolCalls,
    parser(promptText: string): OutputParser {
      const calls = readSyntax ? new ToolCallOutput(TOOL_CALL_FORMATS[readSyntax], { single }) : undefined;
      // A forced reply is calls from its first token: reasoning cannot open before them.
      if (request.reasoning === false || forced) return calls ?? new PlainTextOutput();
      const reasoning = new ReasoningOutput({ startsInside: promptOpensReasoning(promptText) });
      return calls ? new ChainedOutput(reasoning, calls) : reasoning;
    },
  };
}
