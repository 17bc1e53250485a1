// The SSE chunks of a streamed chat completion: the role chunk, then each choice's content, reasoning
// and tool-call deltas as the chat layer reads them, one final chunk per choice, then usage.
import type { RequestUsage } from "../../engine/types.ts";
import type { ChatChoice } from "../../generation/chat.ts";
import type { ChatEvent, PromptProgress } from "../../generation/chat-events.ts";
import type { Profile } from "../profiles/profile.ts";
import type { KeepAlive, SendChunk } from "./sse.ts";
import { errorChunk, finishReasonOf, stopReasonOf } from "./stream-choices.ts";
import { chatChunk, chatLogprobs } from "./translate.ts";

/** What the writer reads of a choice: its events (a ChatChoice, or a list of events in a test). */
export type ChatEvents = Pick<ChatChoice, "events" | "eventsWithProgress">;

export interface ChatStreamContext {
  id: string;
  created: number;
  model: string;
  profile: Profile;
  withLogprobs: boolean;
  /** llama-server's return_progress: prompt progress as `prompt_progress` chunks (else as SSE comments). */
  returnProgress: boolean;
  keepAlive: KeepAlive;
}

/** llama-server's progress chunk: no choices, the prompt's counts beside them. */
function progressChunk(ctx: ChatStreamContext, progress: PromptProgress) {
  return {
    id: ctx.id, object: "chat.completion.chunk", created: ctx.created, model: ctx.model, choices: [],
    prompt_progress: { total: progress.total, cache: progress.cached, processed: progress.processed, time_ms: Math.round(progress.ms) },
  };
}

/** The delta an event adds to a choice, or undefined when it adds nothing on the wire. */
function deltaOf(event: ChatEvent): Record<string, unknown> | undefined {
  switch (event.type) {
    case "content":
      return event.text ? { content: event.text } : undefined;
    case "reasoning":
      return event.text ? { reasoning: event.text } : undefined;
    case "tool_call_delta": {
      const fn: Record<string, string> = { arguments: event.arguments };
      if (event.name !== undefined) fn.name = event.name;
      const call: Record<string, unknown> = { index: event.index };
      if (event.id !== undefined) Object.assign(call, { id: event.id, type: "function" });
      return { tool_calls: [{ ...call, function: fn }] };
    }
    default:
      return undefined;
  }
}

async function streamChatChoice(choice: ChatEvents, index: number, ctx: ChatStreamContext, send: SendChunk): Promise<RequestUsage | undefined> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) =>
    chatChunk(ctx.id, ctx.created, ctx.model, index, delta, finishReason, extra);
  // The choices share one prompt: the first reports its progress.
  for await (const event of index === 0 ? choice.eventsWithProgress() : choice.events()) {
    if (event.type === "prompt_progress") {
      await (ctx.returnProgress ? send(progressChunk(ctx, event)) : ctx.keepAlive());
      continue;
    }
    if (event.type === "done") {
      const rest = ctx.withLogprobs && event.logprobs?.length ? { logprobs: chatLogprobs(event.logprobs) } : {};
      await send(chunk({}, finishReasonOf(event.finishReason), { stop_reason: stopReasonOf(event), ...rest }));
      return event.usage;
    }
    if (event.type === "error") {
      await send(errorChunk(ctx.profile, event.code, event.message));
      return undefined;
    }
    const delta = deltaOf(event);
    if (!delta) continue;
    const logprobs = event.type === "content" && ctx.withLogprobs ? { logprobs: chatLogprobs(event.logprobs) } : {};
    await send(chunk(delta, null, logprobs));
  }
  return undefined;
}

/** Streams every choice concurrently; resolves with their usages, or undefined if any ended in error. */
export async function streamChatChoices(choices: ChatEvents[], ctx: ChatStreamContext, send: SendChunk): Promise<RequestUsage[] | undefined> {
  for (let i = 0; i < choices.length; i++) await send(chatChunk(ctx.id, ctx.created, ctx.model, i, { role: "assistant", content: "" }));
  const usages = await Promise.all(choices.map((choice, index) => streamChatChoice(choice, index, ctx, send)));
  return usages.includes(undefined) ? undefined : (usages as RequestUsage[]);
}
