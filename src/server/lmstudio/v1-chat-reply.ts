// One /api/v1/chat reply read from the shared chat events: its reasoning and message text, told piece
// by piece as LM Studio's streaming events (reasoning.start/delta/end, message.start/delta/end).
import { EngineError, type RequestUsage } from "../../engine/types.ts";
import type { ChatChoice } from "../../generation/chat.ts";
import { ApiError, toApiError } from "../api-error.ts";

export interface Reply {
  reasoning: string;
  content: string;
  usage: RequestUsage;
  /** Set when generation failed part-way; the text is what came before. */
  error?: ApiError;
}

const noUsage: RequestUsage = { promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, timeToFirstTokenMs: 0, promptMs: 0, decodeMs: 0, queueMs: 0 };

/** Reads a choice to its end, telling `emit` each piece as LM Studio's streaming events. */
export async function readReply(choice: Pick<ChatChoice, "events">, emit: (event: string, data: Record<string, unknown>) => Promise<void>): Promise<Reply> {
  let reasoning = "";
  let content = "";
  let open: "reasoning" | "message" | undefined;
  const switchTo = async (part: "reasoning" | "message" | undefined) => {
    if (open === part) return;
    if (open) await emit(`${open}.end`, {});
    if (part) await emit(`${part}.start`, {});
    open = part;
  };
  for await (const event of choice.events()) {
    if (event.type === "reasoning" && event.text) {
      await switchTo("reasoning");
      reasoning += event.text;
      await emit("reasoning.delta", { content: event.text });
    } else if (event.type === "content" && event.text) {
      await switchTo("message");
      content += event.text;
      await emit("message.delta", { content: event.text });
    } else if (event.type === "done") {
      await switchTo(undefined);
      return { reasoning, content, usage: event.usage };
    } else if (event.type === "error") {
      await switchTo(undefined);
      return { reasoning, content, usage: noUsage, error: toApiError(new EngineError(event.code, event.message)) };
    }
  }
  return { reasoning, content, usage: noUsage, error: new ApiError(500, "Generation ended without a result") };
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

/** A reply as LM Studio's result: reasoning and message output items, its stats and the stored conversation's id. */
export function replyResult(reply: Reply, facts: ReplyFacts) {
  const decodeSeconds = reply.usage.decodeMs / 1000;
  const output = [
    ...(reply.reasoning ? [{ type: "reasoning", content: reply.reasoning }] : []),
    { type: "message", content: reply.content },
  ];
  return {
    model_instance_id: facts.instanceId,
    output,
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
