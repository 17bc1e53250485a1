// System messages after the first message: kept where the template writes a system turn, moved into the
// adjacent user turn as a <system-reminder> where the template refuses them, leaves them out or writes
// them at the top. Either way the prompt before them stays byte for byte what it was without them. Real
// templates rendered by the real Jinja and Go template renderers.
import { describe, expect, test } from "bun:test";
import { renderOllamaPrompt } from "../../src/chat/go-template/ollama-prompt.ts";
import { renderChatText } from "../../src/chat/chat-text.ts";
import { placeSystemMessages } from "../../src/chat/system-messages.ts";
import { renderChatTemplate } from "../../src/chat/template.ts";
import type { ChatMessage } from "../../src/chat/types.ts";
import { CHATML_HERMES_TEMPLATE } from "../../scripts/models/templates.ts";

// Qwen3's rule (and many GGUF templates'): a system message anywhere but first is an error.
const REFUSING = `{%- for message in messages %}{%- if message.role == "system" and not loop.first %}{{ raise_exception("System message must be at the beginning.") }}{%- endif %}` +
  `{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}`;
// Only messages[0] may be the system prompt; later system messages are silently dropped.
const DROPPING = `{%- if messages[0].role == "system" %}{{ 'SYSTEM: ' + messages[0].content + '\\n' }}{%- endif %}` +
  `{%- for message in messages %}{%- if message.role == "user" or message.role == "assistant" %}{{ message.role + ': ' + message.content + '\\n' }}{%- endif %}{%- endfor %}`;
// An Ollama TEMPLATE that writes .System (every system message, joined) at the top and skips them in the loop.
const GO_SYSTEM_AT_TOP = `{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}{{ range .Messages }}{{ if ne .Role "system" }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}{{ end }}<|im_start|>assistant\n`;
// One that writes each message where it stands, system ones included.
const GO_IN_PLACE = `{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n`;

const place = (template: string, messages: ChatMessage[]) =>
  placeSystemMessages(messages, (conversation) => renderChatTemplate(template, conversation));
const jinja = (template: string) => (messages: ChatMessage[]) =>
  renderChatText({ template, messages, controlTokenTexts: [], bosText: "", eosText: "" }).text;
const go = (template: string) => (messages: ChatMessage[]) => renderOllamaPrompt(template, { messages });

const opening: ChatMessage[] = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "hi" },
  { role: "assistant", content: "hello" },
];
const conversation: ChatMessage[] = [
  ...opening.slice(0, 2),
  { role: "system", content: "# Environment\ncwd: /work" },
  opening[2]!,
  { role: "system", content: "Be brief." },
  { role: "user", content: "go on" },
];

describe("placeSystemMessages", () => {
  test("a template that writes system turns anywhere keeps each where it stands", () => {
    expect(place(CHATML_HERMES_TEMPLATE, conversation)).toBe(conversation);
    const text = jinja(CHATML_HERMES_TEMPLATE)(conversation);
    expect(text).toContain("<|im_start|>user\nhi<|im_end|>\n<|im_start|>system\n# Environment\ncwd: /work<|im_end|>\n<|im_start|>assistant\nhello");
  });

  test("a template that refuses them gets each in the user turn beside it (after it, else before it), as a system reminder", () => {
    expect(() => renderChatTemplate(REFUSING, conversation)).toThrow("System message must be at the beginning");
    expect(place(REFUSING, conversation)).toEqual([
      { role: "system", content: "You are a coding agent." },
      { role: "user", content: "hi\n\n<system-reminder>\n# Environment\ncwd: /work\n</system-reminder>" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "<system-reminder>\nBe brief.\n</system-reminder>\n\ngo on" },
    ]);
  });

  test("with no user turn beside it, it becomes one where it stands (a run of them, one turn)", () => {
    const trailing: ChatMessage[] = [...opening, { role: "system", content: "Wrap up." }, { role: "system", content: "Be brief." }];
    expect(place(REFUSING, trailing).slice(2)).toEqual([
      { role: "assistant", content: "hello" },
      { role: "user", content: "<system-reminder>\nWrap up.\n</system-reminder>\n\n<system-reminder>\nBe brief.\n</system-reminder>" },
    ]);
  });

  test("Claude Code's pattern keeps its place as the conversation grows: [user, system], then [user, system, assistant, user]", () => {
    const turn1: ChatMessage[] = [{ role: "system", content: "You are Claude Code." }, { role: "user", content: "Say hello" }, { role: "system", content: "gitStatus: clean" }];
    const turn2: ChatMessage[] = [...turn1, { role: "assistant", content: "Hello" }, { role: "user", content: "And now goodbye" }];
    const render = jinja(REFUSING);
    const first = renderChatText({ template: REFUSING, messages: turn1, controlTokenTexts: [], bosText: "", eosText: "", addGenerationPrompt: false }).text;
    expect(first).toContain("Say hello\n\n<system-reminder>\ngitStatus: clean\n</system-reminder>");
    expect(render(turn2).startsWith(first)).toBe(true);
  });

  test("a template that leaves them out loses no text, and the system prompt stays as it was", () => {
    const text = jinja(DROPPING)(conversation);
    expect(text).toStartWith("SYSTEM: You are a coding agent.\nuser: hi\n\n<system-reminder>\n# Environment\ncwd: /work\n</system-reminder>\nassistant: hello\n");
    expect(text).toContain("<system-reminder>\nBe brief.\n</system-reminder>");
  });

  test("a conversation without later system messages is untouched, and so is one whose probe numbers share digits", () => {
    const plain: ChatMessage[] = [{ role: "system", content: "s" }, { role: "user", content: "hi" }];
    expect(place(REFUSING, plain)).toBe(plain);
    // eleven turns: probe 1 must not be found inside probe 10
    const long: ChatMessage[] = [{ role: "system", content: "s" }, ...Array.from({ length: 10 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `t${i}` })), { role: "system", content: "late" }];
    expect(place(CHATML_HERMES_TEMPLATE, long)).toBe(long);
  });

  test("an Ollama TEMPLATE that writes .System at the top gets them in user turns; one that writes them in place keeps them", () => {
    const top = go(GO_SYSTEM_AT_TOP)(conversation);
    expect(top).toStartWith("<|im_start|>system\nYou are a coding agent.<|im_end|>\n<|im_start|>user\nhi\n\n<system-reminder>\n# Environment");
    expect(top).toContain("<|im_start|>user\n<system-reminder>\nBe brief.");
    const inPlace = go(GO_IN_PLACE)(conversation);
    expect(inPlace).toContain("<|im_start|>user\nhi<|im_end|>\n<|im_start|>system\n# Environment\ncwd: /work<|im_end|>\n");
  });
});

describe("a later system message never moves the start of the prompt", () => {
  const templates: Array<[string, (messages: ChatMessage[]) => string]> = [
    ["a chat template that refuses it", jinja(REFUSING)],
    ["a chat template that writes it in place", jinja(CHATML_HERMES_TEMPLATE)],
    ["a chat template that leaves it out", jinja(DROPPING)],
    ["an Ollama TEMPLATE that writes .System at the top", go(GO_SYSTEM_AT_TOP)],
    ["an Ollama TEMPLATE that writes it in place", go(GO_IN_PLACE)],
  ];
  test.each(templates)("%s", (_, render) => {
    const before = render([...opening, { role: "user", content: "go on" }]);
    const after = render([...opening, { role: "system", content: "Be brief." }, { role: "user", content: "go on" }]);
    // everything up to the last user turn is the same bytes
    const shared = before.slice(0, before.lastIndexOf("go on") - "user".length - 2);
    expect(shared.length).toBeGreaterThan(20);
    expect(after.startsWith(shared)).toBe(true);
    expect(after).toContain("Be brief.");
  });
});
