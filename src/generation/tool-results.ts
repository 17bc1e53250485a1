// What the model reads of a server-run tool's call, and the bounds on it: each result cut to its size, all
// results of a request within a budget, failures as text. Apart from the tool loop so that the SDK's
// Conversation, which runs MCP tools in the program itself, shares the bounds without the chat path.

/** Why a call gave no output: the MCP server's failure, or a bound of the loop ("limit"). */
export interface ServerToolFailure {
  type: "mcp_protocol_error" | "mcp_tool_execution_error" | "http_error" | "limit";
  message: string;
  code?: number;
  content?: unknown;
}

export type ServerToolOutcome =
  | { ok: true; output: string; /** The result's content blocks as the server sent them. */ content?: unknown[] }
  | { ok: false; failure: ServerToolFailure };

export interface ToolLoopLimits {
  /** Generations that may call server tools; one more then answers with tools hidden. */
  maxRounds: number;
  /** Server calls one generation may make; the rest get an error result. */
  maxCallsPerRound: number;
  /** Characters of one result the model reads; the rest is cut with a note. */
  maxResultChars: number;
  /** Characters of all results of one request; later calls get an error result. */
  maxTotalOutputChars: number;
}

export const DEFAULT_TOOL_LOOP_LIMITS: ToolLoopLimits = { maxRounds: 8, maxCallsPerRound: 8, maxResultChars: 16_384, maxTotalOutputChars: 65_536 };

/** The results' share of a request: each cut to its limit, and refused once all results reach theirs. */
export class OutputBudget {
  private used = 0;
  constructor(private readonly limits: ToolLoopLimits) {}

  bound(outcome: ServerToolOutcome): ServerToolOutcome {
    if (!outcome.ok) return outcome;
    const left = this.limits.maxTotalOutputChars - this.used;
    if (left <= 0) return limitFailure(`The tool output budget of this request (${this.limits.maxTotalOutputChars} characters) is spent; the result was dropped`);
    const room = Math.min(this.limits.maxResultChars, left);
    const output = outcome.output.length <= room
      ? outcome.output
      : `${outcome.output.slice(0, room)}\n[result truncated: ${outcome.output.length - room} more characters not shown]`;
    this.used += Math.min(outcome.output.length, room);
    return { ...outcome, output };
  }
}

export const limitFailure = (message: string): ServerToolOutcome => ({ ok: false, failure: { type: "limit", message } });

/** What the model reads of an outcome. */
export const resultText = (outcome: ServerToolOutcome) => (outcome.ok ? outcome.output : `Error: ${outcome.failure.message}`);
