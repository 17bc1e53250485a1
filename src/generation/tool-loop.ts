// The tool loop over the one orchestrator: runs a chat, and when the model calls a tool the server runs
// (an MCP server's), runs the call, appends the assistant's call and the tool's result to the
// conversation and runs the chat again, until the model answers, only client-side function calls remain
// (returned to the client as without a loop), or a call waits for the client's approval. Every API with
// server-run tools goes through here and translates its events at the edge. Bounded: rounds, calls per
// round, the size of each result (cut with a note the model reads) and of all results of a request.
import type { ParsedToolCall } from "../chat/output-parser.ts";
import type { ChatMessage, ToolDefinition } from "../chat/types.ts";
import type { RequestUsage } from "../engine/types.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import type { EngineSettings } from "../options/engine-settings.ts";
import type { ChatEvent, PromptProgress } from "./chat-events.ts";
import type { RenderedPrompt } from "./chat.ts";
import type { ChatSpec, ModelHandle, RunOptions } from "./chat-spec.ts";
import { runChat, type RunningChat } from "./run-chat.ts";
import { DEFAULT_TOOL_LOOP_LIMITS, limitFailure, OutputBudget, resultText, type ServerToolOutcome, type ToolLoopLimits } from "./tool-results.ts";

/** Where a server-run tool comes from, for the edges to name it (a server label, an LM Studio plugin id). */
export interface ToolOrigin {
  label: string;
  /** "mcp/NAME" for a configured server; unset for a server a request named by URL. */
  pluginId?: string;
}

/** A tool the server runs for the model. */
export interface ServerTool {
  /** The name the model sees and calls. */
  name: string;
  /** The tool's own name on its server. */
  serverName: string;
  definition: ToolDefinition;
  origin: ToolOrigin;
  /** Its calls wait for the client's approval (the Responses API's require_approval). */
  requiresApproval: boolean;
  run(args: Record<string, unknown>, signal?: AbortSignal): Promise<ServerToolOutcome>;
}

export interface ServerCall {
  call: ParsedToolCall;
  tool: ServerTool;
  /** The call's index in its generation (as its deltas carry it); unset for calls carried over. */
  index?: number;
}

/** A call from an earlier response that waited for approval, now approved or denied. */
export interface ResumedCall extends ServerCall {
  approved: boolean;
  approvalRequestId: string;
}

export type ToolLoopEvent =
  /** A generation starts (the first is round 0). */
  | { type: "round"; round: number }
  /** The chat events of the generation; tool_call_delta and tool_call only for the client's own functions. */
  | Exclude<ChatEvent, { type: "done" }>
  /** How far each generation's prompt is (keep-alives for streams during a long prompt). */
  | PromptProgress
  /** Part of a server call as it streams (as tool_call_delta). */
  | { type: "server_call_delta"; index: number; tool: ServerTool; arguments: string }
  /** A complete server call, about to run. */
  | ({ type: "server_call"; approvalRequestId?: string } & ServerCall)
  | ({ type: "server_result"; outcome: ServerToolOutcome; approvalRequestId?: string } & ServerCall)
  /** A complete server call that waits for the client's approval: the loop ends after this round. */
  | ({ type: "approval_request" } & ServerCall)
  /** The end: the last generation's finish, usage summed over every generation. */
  | Extract<ChatEvent, { type: "done" }>;

export interface ToolLoopRequest {
  tools: ServerTool[];
  limits?: Partial<ToolLoopLimits>;
  /** Calls a client approved or denied, run (or refused) before the first generation. */
  resumed?: ResumedCall[];
}

export interface ToolLoop {
  engine: EngineHandle;
  settings: EngineSettings;
  /** The first generation's prompt. */
  prompt: RenderedPrompt;
  /** Read once; ends with one `done` or `error`. */
  events(): AsyncGenerator<ToolLoopEvent>;
  /** The conversation so far: the spec's messages, then each round's assistant turn and results (whole once events end). */
  readonly messages: ChatMessage[];
}

const addUsage = (a: RequestUsage, b: RequestUsage): RequestUsage => ({
  promptTokens: a.promptTokens + b.promptTokens,
  cachedPromptTokens: a.cachedPromptTokens + b.cachedPromptTokens,
  completionTokens: a.completionTokens + b.completionTokens,
  timeToFirstTokenMs: a.timeToFirstTokenMs,
  promptMs: a.promptMs + b.promptMs,
  decodeMs: a.decodeMs + b.decodeMs,
  queueMs: a.queueMs + b.queueMs,
});

const toolCallOf = (call: ParsedToolCall) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } });

/**
 * Starts the loop: approved calls carried over run first, then the first generation starts before this
 * resolves (so a request that cannot run fails as it would without tools).
 */
export async function runToolLoop(model: ModelHandle, spec: ChatSpec, run: RunOptions, request: ToolLoopRequest): Promise<ToolLoop> {
  if (spec.prompt.kind !== "conversation") throw new TypeError("Cannot run server tools on a raw prompt");
  if ((spec.n ?? 1) !== 1 && request.tools.length > 0) throw new RangeError("Cannot run server tools for more than one choice (n must be 1)");
  const limits = { ...DEFAULT_TOOL_LOOP_LIMITS, ...request.limits };
  const prompt = spec.prompt;
  const tools = new Map(request.tools.map((tool) => [tool.name, tool]));
  const definitions = [...(spec.output?.tools ?? []), ...request.tools.map((tool) => tool.definition)];
  const messages: ChatMessage[] = [...prompt.messages];
  const budget = new OutputBudget(limits);
  const requested = spec.limit.maxTokens;
  let usedTokens = 0;

  const runCall = async (call: ServerCall): Promise<ServerToolOutcome> => {
    try {
      return budget.bound(await call.tool.run(call.call.arguments, run.signal));
    } catch (error) {
      return { ok: false, failure: { type: "mcp_protocol_error", message: `Cannot run "${call.tool.name}": ${(error as Error).message}` } };
    }
  };

  // Calls approved in an earlier response: the assistant's call, then its result (or the refusal).
  const before: ToolLoopEvent[] = [];
  if (request.resumed?.length) {
    messages.push({ role: "assistant", content: "", tool_calls: request.resumed.map((resumed) => toolCallOf(resumed.call)) });
    for (const resumed of request.resumed) {
      const { approvalRequestId } = resumed;
      let outcome: ServerToolOutcome;
      if (resumed.approved) {
        before.push({ type: "server_call", call: resumed.call, tool: resumed.tool, approvalRequestId });
        outcome = await runCall(resumed);
        before.push({ type: "server_result", call: resumed.call, tool: resumed.tool, outcome, approvalRequestId });
      } else {
        outcome = limitFailure("The user did not approve this call");
      }
      messages.push({ role: "tool", tool_call_id: resumed.call.id, content: resultText(outcome) });
    }
  }

  const roundSpec = (round: number): ChatSpec | undefined => {
    let maxTokens = requested;
    if (typeof requested === "number") {
      maxTokens = requested - usedTokens;
      if (maxTokens <= 0) return undefined;
    }
    const output = spec.output ?? {};
    // A forced choice holds for the first generation; after the last round the model answers without tools.
    const toolChoice = round >= limits.maxRounds ? "none" : round === 0 ? output.toolChoice : output.toolChoice === "none" ? "none" : "auto";
    return {
      ...spec,
      prompt: { ...prompt, messages: [...messages] },
      output: { ...output, tools: definitions, ...(toolChoice !== undefined ? { toolChoice } : {}) },
      limit: { ...spec.limit, ...(maxTokens !== undefined ? { maxTokens } : {}) },
    };
  };

  const first: RunningChat = await runChat(model, roundSpec(0)!, run);

  async function* events(): AsyncGenerator<ToolLoopEvent> {
    yield* before;
    let running = first;
    let usage: RequestUsage | undefined;
    for (let round = 0; ; round++) {
      yield { type: "round", round };
      let content = "";
      let reasoning = "";
      const calls: Array<{ call: ParsedToolCall; index: number }> = [];
      const serverOf = new Map<number, ServerTool | undefined>();
      let done: Extract<ChatEvent, { type: "done" }> | undefined;
      for await (const event of running.choices[0]!.eventsWithProgress()) {
        if (event.type === "content") content += event.text;
        else if (event.type === "reasoning") reasoning += event.text;
        else if (event.type === "tool_call_delta") {
          if (!serverOf.has(event.index)) serverOf.set(event.index, event.name !== undefined ? tools.get(event.name) : undefined);
          const tool = serverOf.get(event.index);
          if (tool) {
            yield { type: "server_call_delta", index: event.index, tool, arguments: event.arguments };
            continue;
          }
        } else if (event.type === "tool_call") {
          calls.push({ call: event.call, index: event.index });
          if (tools.has(event.call.name)) continue;
        } else if (event.type === "done") {
          done = event;
          break;
        } else if (event.type === "error") {
          yield event;
          return;
        }
        yield event;
      }
      if (!done) {
        yield { type: "error", code: "engine_failure", message: "Generation ended without a result" };
        return;
      }
      usage = usage ? addUsage(usage, done.usage) : done.usage;
      usedTokens += done.usage.completionTokens;
      const serverCalls: ServerCall[] = calls.flatMap(({ call, index }) => (tools.has(call.name) ? [{ call, tool: tools.get(call.name)!, index }] : []));
      const waiting = serverCalls.filter((c) => c.tool.requiresApproval);
      const runnable = serverCalls.filter((c) => !c.tool.requiresApproval);
      const turnCalls = calls.map(({ call }) => call).filter((call) => !waiting.some((w) => w.call === call));
      messages.push({
        role: "assistant", content,
        ...(turnCalls.length ? { tool_calls: turnCalls.map(toolCallOf) } : {}), ...(reasoning ? { reasoning_content: reasoning } : {}),
      });
      if (serverCalls.length === 0) {
        yield { ...done, usage };
        return;
      }
      for (const [index, serverCall] of runnable.entries()) {
        yield { type: "server_call", ...serverCall };
        const outcome = index < limits.maxCallsPerRound
          ? await runCall(serverCall)
          : limitFailure(`Not run: at most ${limits.maxCallsPerRound} tool calls are run per turn`);
        yield { type: "server_result", ...serverCall, outcome };
        messages.push({ role: "tool", tool_call_id: serverCall.call.id, content: resultText(outcome) });
      }
      for (const serverCall of waiting) yield { type: "approval_request", ...serverCall };
      // Client calls and approvals go back to the client; a cancelled request stops here too.
      const clientCalls = calls.length > serverCalls.length;
      if (waiting.length > 0 || clientCalls || run.signal?.aborted) {
        yield { ...done, usage, finishReason: run.signal?.aborted ? "cancelled" : "tool_calls" };
        return;
      }
      const next = roundSpec(round + 1);
      if (!next) {
        yield { ...done, usage, finishReason: "length" };
        return;
      }
      try {
        running = await runChat(model, next, run);
      } catch (error) {
        yield { type: "error", code: "invalid_request", message: (error as Error).message };
        return;
      }
    }
  }

  return { engine: first.engine, settings: first.settings, prompt: first.prompt, events, messages };
}
