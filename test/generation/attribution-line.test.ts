// Claude Code's attribution line is left out of system messages, as its own block (a line of the joined
// system text) or a line at the start of a system string; nothing else is.
import { expect, test } from "bun:test";
import { withoutAttributionLines } from "../../src/generation/attribution-line.ts";
import type { ChatMessage } from "../../src/chat/types.ts";

const HEADER = "x-anthropic-billing-header: cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;";

test("the attribution line leaves system messages; the rest of their text stays as it was", () => {
  const messages: ChatMessage[] = [
    { role: "system", content: `${HEADER}\nYou are a Claude agent.\n\nBe careful.` },
    { role: "user", content: `${HEADER}\nquoted by a user` },
    { role: "system", content: `Reminder\n${HEADER}` },
  ];
  expect(withoutAttributionLines(messages)).toEqual([
    { role: "system", content: "You are a Claude agent.\n\nBe careful." },
    { role: "user", content: `${HEADER}\nquoted by a user` },
    { role: "system", content: "Reminder\n" },
  ]);
});

test("a system message of the line alone is left out; a conversation without it is the same array", () => {
  const alone: ChatMessage[] = [{ role: "system", content: HEADER }, { role: "developer", content: `${HEADER}\n` }, { role: "user", content: "hi" }];
  expect(withoutAttributionLines(alone)).toEqual([{ role: "user", content: "hi" }]);
  const plain: ChatMessage[] = [{ role: "system", content: "mentions x-anthropic-billing-header: inside a line" }, { role: "user", content: "hi" }];
  expect(withoutAttributionLines(plain)).toBe(plain);
});
