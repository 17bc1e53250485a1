// Claude Code's attribution line ("x-anthropic-billing-header: cc_version=2.1.332.<suffix>;
// cc_entrypoint=sdk-cli;"), sent as the first block of its system prompt. Anthropic's API reads it for
// billing; a model gains nothing from it. Its suffix changes with each session's first message, and at the
// very top of the prompt it would keep every new session from sharing the cached system prompt and tools
// of the last. It is left out of the prompt (and so of token counts) whatever API brought it.
import type { ChatMessage } from "../chat/types.ts";

export const ATTRIBUTION_PREFIX = "x-anthropic-billing-header:";

const SYSTEM_ROLES = new Set(["system", "developer"]);

/** A system text without its attribution lines: each whole line that starts with the prefix, with its line break. */
function withoutAttribution(text: string): string {
  if (!text.includes(ATTRIBUTION_PREFIX)) return text;
  return text.split(/(?<=\n)/).filter((line) => !line.startsWith(ATTRIBUTION_PREFIX)).join("");
}

/**
 * The conversation with attribution lines left out of its system messages (a block of Anthropic's
 * `system` array becomes a line of the joined text); a system message that held nothing else is left out.
 * Returns the same array when there is none.
 */
export function withoutAttributionLines(messages: ChatMessage[]): ChatMessage[] {
  let changed = false;
  const kept: ChatMessage[] = [];
  for (const message of messages) {
    if (!SYSTEM_ROLES.has(message.role) || !message.content?.includes(ATTRIBUTION_PREFIX)) {
      kept.push(message);
      continue;
    }
    const content = withoutAttribution(message.content);
    if (content === message.content) {
      kept.push(message);
      continue;
    }
    changed = true;
    if (content.trim() !== "" || message.images?.length || message.audio?.length) kept.push({ ...message, content });
  }
  return changed ? kept : messages;
}
