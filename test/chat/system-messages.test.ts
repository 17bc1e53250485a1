// System messages after the first message: kept where the chat template writes a system turn, joined in
// order to the leading system prompt where the template refuses them or leaves them out. Real templates
// rendered by the real Jinja renderer.
import { describe, expect, test } from "bun:test";
import { placeSystemMessages } from "../../src/chat/system-messages.ts";
import { renderChatTemplate } from "../../src/chat/template.ts";
import type { ChatMessage } from "../../src/chat/types.ts";
import { CHATML_HERMES_TEMPLATE } from "../../scripts/models/templates.ts";

// Qwen3's rule: a system message anywhere but first is an error.
const REFUSING = `{%- for message in messages %}{%- if message.role == "system" and not loop.first %}{{ raise_exception("System message must be at the beginning.") }}{%- endif %}` +
  `{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}{{ '<|im_start|>assistant\\n' }}`;
// Only messages[0] may be the system prompt; later system messages are silently dropped.
const DROPPING = `{%- if messages[0].role == "system" %}{{ 'SYSTEM: ' + messages[0].content + '\\n' }}{%- endif %}` +
  `{%- for message in messages %}{%- if message.role == "user" or message.role == "assistant" %}{{ message.role + ': ' + message.content + '\\n' }}{%- endif %}{%- endfor %}`;

const place = (template: string, messages: ChatMessage[]) =>
  placeSystemMessages(messages, (conversation) => renderChatTemplate(template, conversation));
const render = (template: string, messages: ChatMessage[]) => renderChatTemplate(template, place(template, messages));

const conversation: ChatMessage[] = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "hi" },
  { role: "system", content: "# Environment\ncwd: /work" },
  { role: "assistant", content: "hello" },
  { role: "system", content: "Be brief." },
  { role: "user", content: "go on" },
];

describe("placeSystemMessages", () => {
  test("a template that writes system turns anywhere keeps each where it stands", () => {
    expect(place(CHATML_HERMES_TEMPLATE, conversation)).toBe(conversation);
    const text = render(CHATML_HERMES_TEMPLATE, conversation);
    expect(text).toContain("<|im_start|>user\nhi<|im_end|>\n<|im_start|>system\n# Environment\ncwd: /work<|im_end|>\n<|im_start|>assistant\nhello");
  });

  test("a template that refuses them gets them joined, in order, to the system prompt", () => {
    expect(() => renderChatTemplate(REFUSING, conversation)).toThrow("System message must be at the beginning");
    const placed = place(REFUSING, conversation);
    expect(placed.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(placed[0]!.content).toBe("You are a coding agent.\n\n# Environment\ncwd: /work\n\nBe brief.");
    expect(render(REFUSING, conversation)).toStartWith("<|im_start|>system\nYou are a coding agent.\n\n# Environment");
  });

  test("a template that leaves them out loses no text", () => {
    const text = render(DROPPING, conversation);
    expect(text).toStartWith("SYSTEM: You are a coding agent.\n\n# Environment\ncwd: /work\n\nBe brief.\n");
    expect(text).toContain("user: hi\nassistant: hello\nuser: go on");
  });

  test("without a leading system prompt the moved ones become it; a conversation without later ones is untouched", () => {
    const placed = place(REFUSING, [{ role: "user", content: "hi" }, { role: "system", content: "Be brief." }]);
    expect(placed).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]);
    const plain: ChatMessage[] = [{ role: "system", content: "s" }, { role: "user", content: "hi" }];
    expect(place(REFUSING, plain)).toBe(plain);
  });
});
