// The prompt of a stored model: its Ollama TEMPLATE (a Go template) when it has one, else the GGUF's
// chat template through renderChatPrompt. Template text is tokenized with special tokens recognised;
// values from the conversation are tokenized as plain text, so "<|im_end|>" typed by a user stays
// text. BOS is added only when the template did not write it.
import { tokenizerAddsBos } from "../chat/template.ts";
import { renderOllamaPromptParts, type OllamaPromptInput } from "../chat/go-template/ollama-prompt.ts";
import { renderChatPrompt, type ChatPrompt, type RenderedPrompt } from "./chat.ts";
import type { EngineHandle } from "./engine-handle.ts";

/** Renders `input` with a Go template and tokenizes it part by part. */
export async function renderGoTemplatePrompt(engine: EngineHandle, template: string, input: OllamaPromptInput): Promise<RenderedPrompt> {
  const parts = renderOllamaPromptParts(template, input);
  const text = parts.map((part) => part.text).join("");
  const tokens: number[] = [];
  let first = true;
  for (const part of parts) {
    if (!part.text) continue;
    const addSpecial = first && tokenizerAddsBos(text, engine.info.bosText);
    tokens.push(...(await engine.tokenize(part.text, { addSpecial, parseSpecial: !part.fromData })));
    first = false;
  }
  return { text, tokens };
}

export interface ModelPromptSource {
  /** the model's Go TEMPLATE, if it has one */
  template?: string;
  /** the model's SYSTEM, used when the conversation has no system message */
  system?: string;
}

/** The prompt for a chat with a stored model: its Go template when present, else its chat template. */
export function renderModelPrompt(engine: EngineHandle, model: ModelPromptSource, prompt: ChatPrompt): Promise<RenderedPrompt> {
  if (model.template !== undefined) {
    return renderGoTemplatePrompt(engine, model.template, {
      messages: prompt.messages, ...(model.system !== undefined ? { system: model.system } : {}), ...(prompt.tools ? { tools: prompt.tools } : {}),
    });
  }
  const messages = model.system && prompt.messages[0]?.role !== "system" ? [{ role: "system", content: model.system }, ...prompt.messages] : prompt.messages;
  return renderChatPrompt(engine, { ...prompt, messages });
}
