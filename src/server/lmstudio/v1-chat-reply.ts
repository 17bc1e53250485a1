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

/**
 * Reads a choice to its end, telling `emit` each piece as LM Studio's streaming events: first
 * prompt_processing.start, a prompt_processing.progress with the fraction of the prompt's tokens to
 * process done after each step that processed some, and prompt_processing.end; then the reply.
 */
export async function readReply(choice: ChatChoice, emit: (event: string, data: Record<string, unknown>) => Promise<void>): Promise<Reply> {
  await emit("prompt_processing.start", {});
  let processing = true;
  let reported = 0;
  let reasoning = "";
  let content = "";
  let open: "reasoning" | "message" | undefined;
  const switchTo = async (part: "reasoning" | "message" | undefined) => {
    if (open === part) return;
    if (open) await emit(`${open}.end`, {});
    if (part) await emit(`${part}.start`, {});
    open = part;
  };
  for await (const event of choice.eventsWithProgress()) {
    if (event.type === "prompt_progress") {
      const toProcess = event.total - event.cached;
      const progress = toProcess > 0 ? (event.processed - event.cached) / toProcess : 1;
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
