// System messages after the first message (chat completions allow them anywhere; agents add reminders
// there): each stays where it is when the template writes a system turn there. Otherwise it travels into
// the adjacent user turn (the next one, else the one before), wrapped as Claude Code wraps its own
// reminders, so that nothing before it changes. Joining it to the system prompt at the top instead would
// move the start of the prompt, and every cached prefix with it, each time a new one appeared. A template
// that refuses such a message ("System message must be at the beginning") or leaves it out would
// otherwise fail the request or lose its text.
import type { ChatMessage } from "./types.ts";

/** Renders a conversation with the model's template; throws when the template refuses it. */
export type RenderConversation = (messages: ChatMessage[]) => string;

const laterSystem = (message: ChatMessage, index: number) => index > 0 && message.role === "system";

/** A system message's text as it travels inside a user turn. */
export const systemReminder = (text: string) => `<system-reminder>\n${text}\n</system-reminder>`;

/**
 * The conversation with every later system message either in place (the template writes it there) or
 * moved into the adjacent user turn. Costs one extra render, and only when there is such a message.
 */
export function placeSystemMessages(messages: ChatMessage[], render: RenderConversation): ChatMessage[] {
  if (!messages.some(laterSystem)) return messages;
  const inPlace = probeInPlace(messages, render);
  const moving = messages.flatMap((message, index) => (laterSystem(message, index) && !inPlace.has(index) ? [index] : []));
  if (moving.length === 0) return messages;
  const before = new Map<number, string[]>();
  const after = new Map<number, string[]>();
  const becomeUser = new Set<number>();
  for (const index of moving) {
    const text = messages[index]!.content ?? "";
    if (text === "") continue;
    const next = messages.findIndex((message, at) => at > index && message.role === "user");
    const previous = messages.findLastIndex((message, at) => at < index && message.role === "user");
    if (next >= 0) (before.get(next) ?? before.set(next, []).get(next)!).push(systemReminder(text));
    else if (previous >= 0) (after.get(previous) ?? after.set(previous, []).get(previous)!).push(systemReminder(text));
    else becomeUser.add(index); // no user turn at all: it becomes one where it stands
  }
  const moved = new Set(moving);
  const placed: ChatMessage[] = [];
  for (const [index, message] of messages.entries()) {
    if (becomeUser.has(index)) placed.push({ role: "user", content: systemReminder(message.content ?? "") });
    else if (moved.has(index)) continue;
    else if (before.has(index) || after.has(index)) {
      const parts = [...before.get(index) ?? [], message.content ?? "", ...after.get(index) ?? []].filter((part) => part !== "");
      placed.push({ ...message, content: parts.join("\n\n") });
    } else placed.push(message);
  }
  return placed;
}

/**
 * Indexes of the later system messages whose text the template writes where they stand: after the text of
 * every user turn before them. A template that puts them elsewhere (all of them at the top, as Ollama
 * templates that write `.System` do) does not count as writing them in place.
 */
function probeInPlace(messages: ChatMessage[], render: RenderConversation): Set<number> {
  const nonce = crypto.randomUUID().slice(0, 8);
  // ends with a dot, so that probe 1 is not the start of probe 10
  const probeOf = (index: number) => `llamux-probe-${nonce}-${index}.`;
  const probed = (message: ChatMessage, index: number) => laterSystem(message, index) || message.role === "user";
  let text: string;
  try {
    text = render(messages.map((message, index) => (probed(message, index) ? { ...message, content: probeOf(index) } : message)));
  } catch {
    return new Set();
  }
  const found = new Set<number>();
  let from = 0;
  for (const [index, message] of messages.entries()) {
    if (!probed(message, index)) continue;
    const at = text.indexOf(probeOf(index), from);
    if (at < 0) continue;
    from = at + probeOf(index).length;
    if (message.role === "system") found.add(index);
  }
  return found;
}
