// System messages after the first message (chat completions allow them anywhere; Claude Code sends one
// after its first user message): each stays where it is when the template writes a system turn there.
// Otherwise it travels into the user turn beside it (the one right after it, else the one right before
// it), wrapped as Claude Code wraps its own reminders, or becomes a user turn of its own where it stands
// when neither neighbour is one. Joining it to the system prompt at the top instead would move the start of
// the prompt, and every cached prefix with it, each time a new one appeared. A template that refuses such a
// message ("System message must be at the beginning") or leaves it out would otherwise fail the request or
// lose its text. Only its neighbours decide where it goes, so a conversation that grows by later turns
// renders it in the same place every time (Claude Code's [user, system] becomes [user, system, assistant,
// user] on the next turn: it stays in the first user turn).
import type { ChatMessage } from "./types.ts";

/** Renders a conversation with the model's template; throws when the template refuses it. */
export type RenderConversation = (messages: ChatMessage[]) => string;

const laterSystem = (message: ChatMessage, index: number) => index > 0 && message.role === "system";

/** A system message's text as it travels inside a user turn. */
export const systemReminder = (text: string) => `<system-reminder>\n${text}\n</system-reminder>`;

/**
 * The conversation with every later system message either in place (the template writes it there) or
 * moved into a user turn beside it. Costs one extra render, and only when there is such a message.
 */
export function placeSystemMessages(messages: ChatMessage[], render: RenderConversation): ChatMessage[] {
  if (!messages.some(laterSystem)) return messages;
  const inPlace = probeInPlace(messages, render);
  const moved = new Set(messages.flatMap((message, index) => (laterSystem(message, index) && !inPlace.has(index) ? [index] : [])));
  if (moved.size === 0) return messages;
  // the neighbours of a moved message are the nearest messages that stay (a run of moved ones travels together)
  const neighbour = (index: number, step: 1 | -1) => {
    let at = index + step;
    while (moved.has(at)) at += step;
    return messages[at]?.role === "user" ? at : -1;
  };
  const before = new Map<number, string[]>();
  const after = new Map<number, string[]>();
  const add = (into: Map<number, string[]>, at: number, text: string) => (into.get(at) ?? into.set(at, []).get(at)!).push(text);
  const ownTurn = new Set<number>();
  for (const index of moved) {
    const text = messages[index]!.content ?? "";
    if (text === "") continue;
    const next = neighbour(index, 1);
    const previous = next < 0 ? neighbour(index, -1) : -1;
    if (next >= 0) add(before, next, systemReminder(text));
    else if (previous >= 0) add(after, previous, systemReminder(text));
    else ownTurn.add(index);
  }
  const placed: ChatMessage[] = [];
  let ownTurnOpen = false; // consecutive ones make one user turn
  for (const [index, message] of messages.entries()) {
    if (ownTurn.has(index)) {
      const reminder = systemReminder(message.content ?? "");
      if (ownTurnOpen) placed[placed.length - 1] = { role: "user", content: `${placed.at(-1)!.content}\n\n${reminder}` };
      else placed.push({ role: "user", content: reminder });
      ownTurnOpen = true;
      continue;
    }
    if (moved.has(index)) continue;
    ownTurnOpen = false;
    if (before.has(index) || after.has(index)) {
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
