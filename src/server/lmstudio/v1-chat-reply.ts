// One /api/v1/chat reply read from the tool loop's events: its output items in order (reasoning, a
// tool_call for each call an MCP server ran, message), told piece by piece as LM Studio's streaming
// events (reasoning.start/delta/end, tool_call.start/arguments/success/failure, message.start/delta/end).
import { EngineError, type RequestUsage } from "../../engine/types.ts";
import type { ToolLoopEvent } from "../../generation/tool-loop.ts";
import { ApiError, toApiError } from "../api-error.ts";
import { providerInfo } from "./v1-chat-integrations.ts";

export type OutputItem =
  | { type: "reasoning"; content: string }
  | { type: "message"; content: string }
  | { type: "tool_call"; tool: string; arguments: Record<string, unknown>; output: string; provider_info: Record<string, string> };

export interface Reply {
  /** All reasoning text of every round. */
  reasoning: string;
  /** The message text of every round. */
  content: string;
  output: OutputItem[];
  usage: RequestUsage;
  /** Set when generation failed part-way; the text is what came before. */
  error?: ApiError;
}

const noUsage: RequestUsage = { promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, timeToFirstTokenMs: 0, promptMs: 0, decodeMs: 0, queueMs: 0 };

/** Reads the loop's events to their end, telling `emit` each piece as LM Studio's streaming events. */
export async function readReply(events: AsyncIterable<ToolLoopEvent>, emit: (event: string, data: Record<string, unknown>) => Promise<void>): Promise<Reply> {
  let reasoning = "";
  let content = "";
  const output: OutputItem[] = [];
  let open: Extract<OutputItem, { type: "reasoning" | "message" }> | undefined;
  const switchTo = async (part: "reasoning" | "message" | undefined) => {
    if (open?.type === part) return;
    if (open) await emit(`${open.type}.end`, {});
    open = undefined;
    if (part) {
      await emit(`${part}.start`, {});
      const item = { type: part, content: "" };
      output.push(item);
      open = item;
    }
  };
  const text = async (part: "reasoning" | "message", delta: string) => {
    await switchTo(part);
    open!.content += delta;
    await emit(`${part}.delta`, { content: delta });
  };
  const end = (usage: RequestUsage, error?: ApiError): Reply => ({ reasoning, content, output, usage, ...(error ? { error } : {}) });
  for await (const event of events) {
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
      const { tool, call, outcome } = event;
      // The model reads a failure as the tool's result; so does the client, in the item's output.
      const result = outcome.ok ? outcome.output : `Error: ${outcome.failure.message}`;
      output.push({ type: "tool_call", tool: tool.serverName, arguments: call.arguments, output: result, provider_info: providerInfo(tool) });
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
