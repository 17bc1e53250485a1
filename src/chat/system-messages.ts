// System messages after the first message (Claude Code sends one inside `messages`; chat completions
// allow them anywhere): each stays where it is when the chat template writes a system turn there, and is
// otherwise joined, in order, to the system prompt at the start. A template that refuses such a message
// ("System message must be at the beginning") or leaves it out would otherwise fail the request or lose
// its text.
import type { ChatMessage } from "./types.ts";

/** Renders a conversation with the model's template; throws when the template refuses it. */
export type RenderConversation = (messages: ChatMessage[]) => string;

const laterSystem = (message: ChatMessage, index: number) => index > 0 && message.role === "system";

/**
 * The conversation with every later system message either in place (the template writes it there) or
 * moved into the leading system message. Costs one extra render, and only when there is such a message.
 */
export function placeSystemMessages(messages: ChatMessage[], render: RenderConversation): ChatMessage[] {
  if (!messages.some(laterSystem)) return messages;
  const rendersInPlace = probeInPlace(messages, render);
  const moved = messages.filter((message, index) => laterSystem(message, index) && !rendersInPlace.has(index));
  if (moved.length === 0) return messages;
  const movedSet = new Set(moved);
  const rest = messages.filter((message) => !movedSet.has(message));
  const texts = moved.map((message) => message.content ?? "").filter((text) => text !== "");
  if (rest[0]?.role === "system") {
    const first = rest[0];
    return [{ ...first, content: [first.content ?? "", ...texts].filter((text) => text !== "").join("\n\n") }, ...rest.slice(1)];
  }
  return texts.length ? [{ role: "system", content: texts.join("\n\n") }, ...rest] : rest;
}

/** Indexes of the later system messages whose text the template writes where they stand. */
function probeInPlace(messages: ChatMessage[], render: RenderConversation): Set<number> {
  const nonce = crypto.randomUUID().slice(0, 8);
  const probeOf = (index: number) => `llamux-system-probe-${nonce}-${index}`;
  const probed = messages.map((message, index) => (laterSystem(message, index) ? { ...message, content: probeOf(index) } : message));
  let text: string;
  try {
    text = render(probed);
  } catch {
    return new Set();
  }
  const found = new Set<number>();
  let from = 0;
  // in order: a template that writes them elsewhere (all at the top) does not count as in place
  for (const [index, message] of probed.entries()) {
    if (!laterSystem(message, index)) continue;
    const at = text.indexOf(probeOf(index), from);
    if (at < 0) continue;
    found.add(index);
    from = at;
  }
  return found;
}
