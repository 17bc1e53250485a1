// The call syntaxes the parsers read, as data: the markers around a block of calls and how a block's
// text becomes calls. One streaming parser (tool-call-output.ts) serves them all.
import { parseJsonCalls } from "./json-calls.ts";
import { parsePythonicCalls, type PythonicCall } from "./literal-parser.ts";
import { ToolCallSyntaxError } from "./syntax-error.ts";

/** vLLM's --tool-call-parser names that llamux reads. */
export const TOOL_CALL_SYNTAXES = ["lfm2", "hermes", "pythonic"] as const;
export type ToolCallSyntax = (typeof TOOL_CALL_SYNTAXES)[number];

export interface ToolCallFormat {
  syntax: ToolCallSyntax;
  /** Text that opens a block of calls. */
  start: string;
  /** Text that closes it; without one, the block is the bracketed list that `start` opens. */
  end?: string;
  /** A block may open only at the start of the reply (vLLM's pythonic: the whole reply is the list). */
  onlyAtStart: boolean;
  /** The calls in a block's text (between the markers; for a bare list, the list itself). */
  parseBlock(text: string): PythonicCall[];
}

function nonEmpty(calls: PythonicCall[], text: string): PythonicCall[] {
  if (calls.length === 0) throw new ToolCallSyntaxError("the call list is empty", text, 0);
  return calls;
}

/** LFM2 writes pythonic lists; llama.cpp's JSON mode for LFM2 writes a list of call objects instead. */
function parseLfm2Block(text: string): PythonicCall[] {
  const json = /^\s*(?:\[\s*)?\{/.test(text);
  return json ? parseJsonCalls(text) : nonEmpty(parsePythonicCalls(text), text);
}

export const TOOL_CALL_FORMATS: Record<ToolCallSyntax, ToolCallFormat> = {
  lfm2: { syntax: "lfm2", start: "<|tool_call_start|>", end: "<|tool_call_end|>", onlyAtStart: false, parseBlock: parseLfm2Block },
  hermes: { syntax: "hermes", start: "<tool_call>", end: "</tool_call>", onlyAtStart: false, parseBlock: parseJsonCalls },
  pythonic: { syntax: "pythonic", start: "[", onlyAtStart: true, parseBlock: (text) => nonEmpty(parsePythonicCalls(text), text) },
};
