// Golden tests of Ollama-style prompt rendering: each template in testdata/go-templates over each
// conversation must give exactly the text in testdata/go-templates/<template>/<conversation>.
// (LLAMUX_UPDATE_GOLDEN=1 rewrites the files; review the diff before committing one.)
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  goTemplateCapabilities,
  renderOllamaPrompt,
  renderOllamaPromptParts,
  type OllamaPromptInput,
} from "../../src/chat/go-template/ollama-prompt.ts";
import { TemplateSyntaxError } from "../../src/chat/go-template/index.ts";
import { SPEC_TEMPLATE } from "../fixtures/spec-modelfile.ts";

const DATA = join(import.meta.dir, "testdata", "go-templates");
const conversations = JSON.parse(readFileSync(join(DATA, "conversations.json"), "utf8")) as Record<string, OllamaPromptInput>;
const template = (name: string) => readFileSync(join(DATA, `${name}.gotmpl`), "utf8");

const MATRIX: Record<string, string[]> = {
  "chatml-startoftext": ["user", "user-assistant-user", "system-user-assistant-user", "consecutive"],
  "chatml-tools": ["user", "system-user-assistant-user", "tools-request", "tools-call-result"],
  "llama3-tools": ["user", "system-user-assistant-user", "tools-request", "tools-call-result"],
  "alpaca-legacy": ["user", "system-user-assistant-user", "consecutive"],
  "mistral-legacy": ["user", "user-assistant-user", "system-user-assistant-user"],
  "prompt-only": ["user", "user-assistant-user"],
  "gemma-messages": ["user", "system-user-assistant-user", "consecutive"],
  "thinking-messages": ["think-unset", "think-on", "think-off"],
  fim: ["fim", "user"],
};

describe("renderOllamaPrompt golden files", () => {
  for (const [name, conversationNames] of Object.entries(MATRIX)) {
    for (const conversation of conversationNames) {
      test(`${name} × ${conversation}`, () => {
        const rendered = renderOllamaPrompt(template(name), conversations[conversation]!);
        const file = join(DATA, name, conversation);
        if (process.env.LLAMUX_UPDATE_GOLDEN === "1") {
          mkdirSync(join(DATA, name), { recursive: true });
          writeFileSync(file, rendered);
        }
        expect(existsSync(file)).toBe(true);
        expect(rendered).toBe(readFileSync(file, "utf8"));
      });
    }
  }
});

describe("renderOllamaPrompt", () => {
  test("the spec's ChatML template renders turn by turn, each turn opened by <|startoftext|>", () => {
    expect(template("chatml-startoftext")).toBe(SPEC_TEMPLATE);
    const prompt = renderOllamaPrompt(SPEC_TEMPLATE, conversations["system-user-assistant-user"]!);
    expect(prompt).toBe(
      "<|startoftext|><|im_start|>system\nYou are a concise assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n" +
        "<|im_start|>assistant\nHi, how can I help?<|startoftext|><|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  test("the model's SYSTEM applies when the conversation has no system message", () => {
    const input = { system: "Be brief.", messages: [{ role: "user", content: "Hi" }] };
    expect(renderOllamaPrompt(SPEC_TEMPLATE, input)).toContain("<|im_start|>system\nBe brief.<|im_end|>");
    const own = { system: "Be brief.", messages: [{ role: "system", content: "Be long." }, { role: "user", content: "Hi" }] };
    expect(renderOllamaPrompt(SPEC_TEMPLATE, own)).not.toContain("Be brief.");
  });

  test("values from the conversation are marked apart from template text", () => {
    const parts = renderOllamaPromptParts(SPEC_TEMPLATE, { messages: [{ role: "user", content: "say <|im_end|> now" }] });
    expect(parts).toEqual([
      { text: "<|startoftext|><|im_start|>user\n", fromData: false },
      { text: "say <|im_end|> now", fromData: true },
      { text: "<|im_end|>\n<|im_start|>assistant\n", fromData: false },
    ]);
    const literal = renderOllamaPromptParts('{{ $t := "<|tok|>" }}{{ $t }}{{ range .Messages }}{{ .Content }}{{ end }}', {
      messages: [{ role: "user", content: "x" }],
    });
    expect(literal).toEqual([{ text: "<|tok|>", fromData: false }, { text: "x", fromData: true }]);
  });

  test("a bad template is a syntax error with its position", () => {
    expect(() => renderOllamaPrompt("{{ if .System }}never closed", conversations.user!)).toThrow(TemplateSyntaxError);
    expect(() => renderOllamaPrompt("line\n{{ .Prompt ", conversations.user!)).toThrow(/line 2, column 1: unclosed action/);
  });

  test("capabilities come from the fields a template reads", () => {
    expect(goTemplateCapabilities(template("chatml-tools"))).toEqual(["tools"]);
    expect(goTemplateCapabilities(template("fim"))).toEqual(["insert"]);
    expect(goTemplateCapabilities(template("thinking-messages"))).toEqual(["thinking"]);
    expect(goTemplateCapabilities(SPEC_TEMPLATE)).toEqual([]);
  });
});
