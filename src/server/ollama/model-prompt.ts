// The prompt of a native request as Ollama builds it for a model: the model's seed messages (Modelfile
// MESSAGE lines) before the conversation, its SYSTEM when the conversation has no system message, and
// its Ollama TEMPLATE (Go) ahead of the GGUF's chat template. A request's own `template` (/api/generate)
// wins over the model's.
import { tokenizerAddsBos } from "../../chat/template.ts";
import { renderOllamaPrompt, type ThinkSetting } from "../../chat/go-template/ollama-prompt.ts";
import type { ChatMessage, ToolDefinition } from "../../chat/types.ts";
import { renderChatPrompt, type RenderedPrompt } from "../../generation/chat.ts";
import type { EngineHandle } from "../../generation/engine-handle.ts";
import type { ServedModel } from "../model-service.ts";

export interface ModelPromptInput {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  think?: ThinkSetting;
  /** Replaces the model's SYSTEM (/api/generate's `system`). */
  system?: string;
  /** Replaces the model's TEMPLATE (/api/generate's `template`). */
  template?: string;
  /** Fill-in-the-middle: text after the insertion point (needs a TEMPLATE that reads .Suffix). */
  suffix?: string;
}

/** The model's seed messages, then the conversation. */
export function withSeedMessages(model: ServedModel, messages: ChatMessage[]): ChatMessage[] {
  const seeds = model.stored?.messages ?? [];
  return seeds.length ? [...seeds.map((m) => ({ role: m.role, content: m.content })), ...messages] : messages;
}

/** The conversation with the system prompt in front, unless it has a system message of its own. */
function withSystem(messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  if (!system || messages.some((m) => m.role === "system")) return messages;
  return [{ role: "system", content: system }, ...messages];
}

export async function renderModelPrompt(engine: EngineHandle, model: ServedModel, input: ModelPromptInput): Promise<RenderedPrompt> {
  const system = input.system || model.stored?.system;
  const messages = withSeedMessages(model, input.messages);
  const template = input.template || model.stored?.template;
  if (!template) {
    return renderChatPrompt(engine, {
      messages: withSystem(messages, system),
      ...(input.tools?.length ? { tools: input.tools } : {}),
      ...(input.think !== undefined ? { templateVariables: { enable_thinking: input.think !== false } } : {}),
    });
  }
  const text = renderOllamaPrompt(template, {
    messages, ...(system ? { system } : {}), ...(input.tools?.length ? { tools: input.tools } : {}), ...(input.think !== undefined ? { think: input.think } : {}),
    ...(input.suffix ? { suffix: input.suffix } : {}),
  });
  const tokens = await engine.tokenize(text, { addSpecial: tokenizerAddsBos(text, engine.info.bosText), parseSpecial: true });
  return { text, tokens };
}

/** A request's `think` as the prompt input takes it ("max" is the strongest level a template knows). */
export function thinkSetting(think: boolean | string | null | undefined): { think?: ThinkSetting } {
  if (think === undefined || think === null) return {};
  if (typeof think === "boolean") return { think };
  return { think: think === "max" ? "high" : (think as ThinkSetting) };
}
