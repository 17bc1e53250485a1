// Prompts longer than the context, fitted as Ollama fits them by default: a chat loses its oldest
// messages (system messages and the last message stay) until the rendered prompt fits; a raw prompt
// keeps its first num_keep tokens and its end, as llama-server cuts one. What cannot be fitted is a
// ContextLimitError.
import type { ChatMessage } from "../chat/types.ts";
import { logger } from "../log.ts";
import type { RenderedPrompt } from "./chat.ts";
import { ContextLimitError } from "./chat-spec.ts";

const log = logger("generation");

/** The engine needs one free position after the prompt to generate. */
export const promptFits = (tokens: number, contextLength: number) => tokens < contextLength;

/**
 * Keeps the first `numKeep` tokens and drops whole blocks of half the remaining window after them,
 * so that about half the context stays free for the answer (llama-server's prompt truncation).
 */
export function cutPromptTokens(tokens: number[], contextLength: number, numKeep: number): number[] {
  if (promptFits(tokens.length, contextLength)) return tokens;
  const keep = Math.min(numKeep, contextLength - 4);
  const block = Math.floor((contextLength - keep) / 2);
  const erasedBlocks = Math.floor((tokens.length - keep - block) / block);
  const cut = [...tokens.slice(0, keep), ...tokens.slice(keep + erasedBlocks * block)];
  log.warn(`prompt of ${tokens.length} tokens cut to ${cut.length} to fit the context of ${contextLength}`);
  return cut;
}

/** Removes the `count` oldest messages that may go (not system messages, not the last message). */
function dropOldest(messages: ChatMessage[], count: number): ChatMessage[] {
  let dropped = 0;
  return messages.filter((message, index) => {
    if (dropped >= count || message.role === "system" || index === messages.length - 1) return true;
    dropped++;
    return false;
  });
}

/**
 * The rendered prompt of the longest recent part of the chat that fits. Searches for the fewest
 * messages to drop, rendering O(log n) times.
 */
export async function fitMessages(
  messages: ChatMessage[], render: (messages: ChatMessage[]) => Promise<RenderedPrompt>, contextLength: number,
): Promise<RenderedPrompt> {
  const whole = await render(messages);
  if (promptFits(whole.tokens.length, contextLength)) return whole;
  const droppable = messages.filter((m, i) => m.role !== "system" && i !== messages.length - 1).length;
  let low = 1;
  let high = droppable;
  let best: { prompt: RenderedPrompt; dropped: number } | undefined;
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    const prompt = await render(dropOldest(messages, middle));
    if (promptFits(prompt.tokens.length, contextLength)) {
      best = { prompt, dropped: middle };
      high = middle - 1;
    } else {
      low = middle + 1;
    }
  }
  if (!best) throw new ContextLimitError("prompt", whole.tokens.length, contextLength);
  log.warn(`chat of ${whole.tokens.length} tokens does not fit the context of ${contextLength}: dropped its ${best.dropped} oldest messages (${best.prompt.tokens.length} tokens left)`);
  return best.prompt;
}
