// One /api/v1/chat reply read from the tool loop's events (or a plain chat's): its reasoning and message
// text, and a tool_call item for each call an MCP server ran, told piece by piece as LM Studio's
// streaming events (reasoning.start/delta/end, tool_call.start/arguments/success/failure,
// message.start/delta/end).
import { EngineError, type RequestUsage } from "../../engine/types.ts";
import type { ToolLoopEvent } from "../../generation/tool-loop.ts";
import { processedFraction } from "../../generation/chat-events.ts";
import { ApiError, toApiError } from "../api-error.ts";
import { providerInfo } from "./v1-chat-integrations.ts";

export type OutputItem =
  | { type: "reasoning"; content: string }
  | { type: "message"; content: string }
  | { type: "tool_call"; tool: string; arguments: Record<string, unknown>; output: string; provider_info: Record<string, string> };

export interface Reply {
  reasoning: string;
  content: string;
  usage: RequestUsage;
  /** The output items in order, set when an MCP server ran calls (otherwise: reasoning, then message). */
  items?: OutputItem[];
  /** Set when generation failed part-way; the text is what came before. */
  error?: ApiError;
}

const noUsage: RequestUsage = { promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, timeToFirstTokenMs: 0, promptMs: 0, decodeMs: 0, queueMs: 0 };

/**
 * Reads the events to their end, telling `emit` each piece as LM Studio's streaming events: first
 * prompt_processing.start, a prompt_processing.progress with the fraction of the prompt's tokens to
 * process done after each step that processed some, and prompt_processing.end; then the reply (tool
 * rounds after the first report no prompt progress).
 */
export async function readReply(source: { events(): AsyncIterable<ToolLoopEvent> }, emit: (event: string, data: Record<string, unknown>) => Promise<void>): Promise<Reply> {
  await emit("prompt_processing.start", {});
  let processing = true;
  let reported = 0;
  let reasoning = "";
  let content = "";
  const items: OutputItem[] = [];
  let ranTools = false;
  let open: Extract<OutputItem, { type: "reasoning" | "message" }> | undefined;
  const switchTo = async (part: "reasoning" | "message" | undefined) => {
    if (open?.type === part) return;
    if (open) await emit(`${open.type}.end`, {});
    open = undefined;
    if (part) {
      await emit(`${part}.start`, {});
      const item = { type: part, content: "" };
      items.push(item);
      open = item;
    }
  };
  const text = async (part: "reasoning" | "message", delta: string) => {
    await switchTo(part);
    open!.content += delta;
    await emit(`${part}.delta`, { content: delta });
  };
  const end = (usage: RequestUsage, error?: ApiError): Reply => ({ reasoning, content, usage, ...(ranTools ? { items } : {}), ...(error ? { error } : {}) });
  for await (const event of source.events()) {
    if (event.type === "round") continue; // the tool loop's rounds are not LM Studio events
    if (event.type === "prompt_progress") {
      const progress = processedFraction(event);
      if (processing && progress > reported) await emit("prompt_processing.progress", { progress });
      reported = Math.max(reported, progress);
      continue;
    }
    if (processing) {
      processing = false;
      if (reported < 1) await emit("prompt_processing.progress", { progress: 1 });
      await emit("prompt_processing.end", {});
    }
    if (event.type === "reasoning" && event.text) {
      reasoning += event.text;
      await text("reasoning", event.text);
    } else if (event.type === "content" && event.text) {
      content += event.text;
      await text("message", event.text);
    } else if (event.type === "server_call") {
      await switchTo(undefined);
      await emit("tool_call.start", { tool: event.tool.serverName, provider_info: providerInfo(event.tool) });
      await emit("tool_call.arguments", { tool: event.tool.serverName, arguments: event.call.arguments, provider_info: providerInfo(event.tool) });
    } else if (event.type === "server_result") {
      ranTools = true;
      const { tool, call, outcome } = event;
      // The model reads a failure as the tool's result; so does the client, in the item's output.
      const result = outcome.ok ? outcome.output : `Error: ${outcome.failure.message}`;
      items.push({ type: "tool_call", tool: tool.serverName, arguments: call.arguments, output: result, provider_info: providerInfo(tool) });
      if (outcome.ok) {
        await emit("tool_call.success", { tool: tool.serverName, arguments: call.arguments, output: result, provider_info: providerInfo(tool) });
      } else {
        await emit("tool_call.failure", {
          reason: outcome.failure.message, metadata: { type: "tool_error", tool_name: tool.serverName, arguments: call.arguments }, provider_info: providerInfo(tool),
        });
      }
    } else if (event.type === "done") {
      await switchTo(undefined);
      return end(event.usage);
    } else if (event.type === "error") {
      await switchTo(undefined);
      return end(noUsage, toApiError(new EngineError(event.code, event.message)));
    }
  }
  await switchTo(undefined);
  return end(noUsage, new ApiError(500, "Generation ended without a result"));
}

/** What the result's stats need beside the reply. */
export interface ReplyFacts {
  /** The loaded instance that answered. */
  instanceId: string;
  /** The reasoning's length in tokens (at most the completion's). */
  reasoningTokens: number;
  /** Set when this request loaded the model. */
  loadSeconds?: number | undefined;
  /** The stored conversation's id (none when `store` is false). */
  responseId?: string | undefined;
}

/** The output items: in order when tools ran, else reasoning then message; the last is always a message, as LM Studio's. */
function outputOf(reply: Reply): OutputItem[] {
  if (!reply.items) return [...(reply.reasoning ? [{ type: "reasoning" as const, content: reply.reasoning }] : []), { type: "message", content: reply.content }];
  return reply.items.at(-1)?.type === "message" ? reply.items : [...reply.items, { type: "message", content: "" }];
}

/** A reply as LM Studio's result: its output items, its stats and the stored conversation's id. */
export function replyResult(reply: Reply, facts: ReplyFacts) {
  const decodeSeconds = reply.usage.decodeMs / 1000;
  return {
    model_instance_id: facts.instanceId,
    output: outputOf(reply),
    stats: {
      input_tokens: reply.usage.promptTokens,
      total_output_tokens: reply.usage.completionTokens,
      reasoning_output_tokens: Math.min(facts.reasoningTokens, reply.usage.completionTokens),
      tokens_per_second: decodeSeconds > 0 ? reply.usage.completionTokens / decodeSeconds : 0,
      time_to_first_token_seconds: reply.usage.timeToFirstTokenMs / 1000,
      ...(facts.loadSeconds !== undefined ? { model_load_time_seconds: facts.loadSeconds } : {}),
    },
    ...(facts.responseId ? { response_id: facts.responseId } : {}),
  };
}
