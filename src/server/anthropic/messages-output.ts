// What the Messages API sends back for a finished reply: content blocks (thinking, text, tool_use), the
// stop reason in Anthropic's words, and usage with cached prompt tokens reported as cache reads.
import type { RequestUsage } from "../../engine/types.ts";
import { newId, reshapeId } from "../../ids.ts";
import type { ParsedToolCall } from "../../chat/output-parser.ts";
import type { ChatFinishReason } from "../../generation/chat-events.ts";

export const newMessageId = () => newId("message");

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

/** A stop string counts as a stop sequence only when the request named it (a model's own stops end the turn). */
export function stopReasonOf(done: { finishReason: ChatFinishReason; stop?: string }, stopSequences: string[]): { stop_reason: StopReason; stop_sequence: string | null } {
  if (done.finishReason === "tool_calls") return { stop_reason: "tool_use", stop_sequence: null };
  if (done.finishReason === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (done.stop !== undefined && stopSequences.includes(done.stop)) return { stop_reason: "stop_sequence", stop_sequence: done.stop };
  return { stop_reason: "end_turn", stop_sequence: null };
}

/** Anthropic's input_tokens leave out the prompt tokens read from the cache. */
export function messagesUsage(usage: RequestUsage) {
  return {
    input_tokens: usage.promptTokens - usage.cachedPromptTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cachedPromptTokens,
    output_tokens: usage.completionTokens,
  };
}

export const thinkingBlock = (thinking: string) => ({ type: "thinking", thinking, signature: "" });
export const textBlock = (text: string) => ({ type: "text", text });
export const toolUseBlock = (call: { id: string; name: string }, input: Record<string, unknown>) => ({ type: "tool_use", id: reshapeId(call.id, "toolUse"), name: call.name, input });

export function contentBlocks(result: { content: string; reasoning: string; toolCalls: ParsedToolCall[] }) {
  const blocks: Array<Record<string, unknown>> = [];
  if (result.reasoning) blocks.push(thinkingBlock(result.reasoning));
  if (result.content && (result.content.trim() || result.toolCalls.length === 0)) blocks.push(textBlock(result.content));
  for (const call of result.toolCalls) blocks.push(toolUseBlock(call, call.arguments));
  return blocks;
}

export function messageBody(id: string, model: string, content: Array<Record<string, unknown>>, stop: ReturnType<typeof stopReasonOf> | null, usage: ReturnType<typeof messagesUsage>) {
  return { id, type: "message", role: "assistant", model, content, stop_reason: stop?.stop_reason ?? null, stop_sequence: stop?.stop_sequence ?? null, usage };
}
