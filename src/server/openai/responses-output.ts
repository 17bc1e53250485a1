// What the Responses API sends back: the response object (whole, or as the snapshot lifecycle events
// carry) and its output items: `reasoning` (the model's raw reasoning as reasoning_text), `message`
// (output_text) and `function_call`.
import type { RequestUsage } from "../../engine/types.ts";
import { newId, reshapeId } from "../../ids.ts";
import type { ParsedToolCall } from "../../chat/output-parser.ts";
import type { ChatFinishReason } from "../../generation/chat-events.ts";
import type { ResponsesRequest } from "./responses-schema.ts";

const itemKinds = { resp: "response", msg: "outputMessage", rs: "reasoning", fc: "functionCall" } as const;
export const newItemId = (prefix: keyof typeof itemKinds) => newId(itemKinds[prefix]);

/** The fields of a response that echo its request; fixed for its lifetime. */
export interface ResponseEnvelope {
  id: string;
  model: string;
  createdAt: number;
  request: ResponsesRequest;
  /** The sampler values the reply ran with (the request's, else the defaults). */
  temperature: number;
  topP: number;
}

export type OutputItem = Record<string, unknown> & { id: string; type: string };

export const reasoningItem = (id: string, text: string): OutputItem =>
  ({ id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }] });

export const outputTextPart = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });

export const messageItem = (id: string, text: string, status: "in_progress" | "completed"): OutputItem =>
  ({ id, type: "message", status, role: "assistant", content: status === "completed" ? [outputTextPart(text)] : [] });

export const functionCallItem = (id: string, call: { id: string; name: string }, args: string, status: "in_progress" | "completed"): OutputItem =>
  ({ id, type: "function_call", status, call_id: reshapeId(call.id, "callId"), name: call.name, arguments: args });

export function responsesUsage(usage: RequestUsage, reasoningTokens: number) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

/** A reply that ran out of tokens is incomplete, as OpenAI reports max_output_tokens. */
export const statusOf = (finishReason: ChatFinishReason): ResponseStatus => (finishReason === "length" ? "incomplete" : "completed");

export function responseObject(
  envelope: ResponseEnvelope, status: ResponseStatus, output: OutputItem[],
  extra: { usage?: ReturnType<typeof responsesUsage>; error?: { code: string; message: string } } = {},
) {
  const { request } = envelope;
  const format = request.text?.format ?? { type: "text" };
  return {
    id: envelope.id,
    object: "response",
    created_at: envelope.createdAt,
    status,
    completed_at: status === "completed" ? Math.floor(Date.now() / 1000) : null,
    background: false,
    error: extra.error ?? null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: null,
    model: envelope.model,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    service_tier: "default",
    store: request.store ?? true,
    temperature: envelope.temperature,
    text: { format },
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_logprobs: 0,
    top_p: envelope.topP,
    truncation: "disabled",
    usage: extra.usage ?? null,
    metadata: request.metadata ?? {},
  };
}

/** The output items of a finished reply: reasoning, then the message (unless the reply is only reasoning or calls), then the calls. */
export function outputItems(result: { content: string; reasoning: string; toolCalls: ParsedToolCall[] }): OutputItem[] {
  const items: OutputItem[] = [];
  if (result.reasoning) items.push(reasoningItem(newItemId("rs"), result.reasoning));
  if (result.content.trim() || (result.toolCalls.length === 0 && !result.reasoning)) items.push(messageItem(newItemId("msg"), result.content, "completed"));
  for (const call of result.toolCalls) items.push(functionCallItem(newItemId("fc"), call, JSON.stringify(call.arguments), "completed"));
  return items;
}
