// The prompt of a model with Modelfile layers: its Ollama TEMPLATE (a Go template) when it has one, else
// the GGUF's chat template through renderChatPrompt; its seed messages and SYSTEM either way. A Go
// template is tokenized part by part (go-template-prompt.ts): template text with special tokens recognised;
// values from the conversation are tokenized as plain text, so "<|im_end|>" typed by a user stays
// text. BOS is added only when the template did not write it.
import type { ThinkSetting } from "../chat/go-template/ollama-prompt.ts";
import { renderGoTemplatePrompt } from "./go-template-prompt.ts";
import { TemplateExecutionError, TemplateLimitError, TemplateSyntaxError } from "../chat/go-template/errors.ts";
import { ChatTemplateError } from "../chat/template.ts";
import { modelLabel } from "./model-label.ts";
import type { ChatMessage, ToolDefinition } from "../chat/types.ts";
import { renderChatPrompt, type ChatPrompt, type RenderedPrompt } from "./chat.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";

export interface ModelPromptSource {
  /** the model's Go TEMPLATE, if it has one */
  template?: string;
  /** the model's SYSTEM, used when the conversation has no system message */
  system?: string;
  /** the model's seed conversation (Modelfile MESSAGE lines), put before the request's messages */
  messages?: Array<{ role: string; content: string }>;
}

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
  /** The call syntax the reply is read in, for assistant tool calls a chat template does not render. */
  toolCallSyntax?: ChatPrompt["toolCallSyntax"];
  /** For a Jinja template: extra variables (over enable_thinking from `think`), and how the prompt ends. */
  templateVariables?: Record<string, unknown>;
  addGenerationPrompt?: boolean;
  continueFinalMessage?: boolean;
  /** Add BOS (true) or not (false) whatever the template wrote. Default: only where it wrote none. */
  addSpecial?: boolean;
}

/**
 * The conversation with the system prompt in front, unless it starts with a system message of its own
 * (as Ollama decides; a later system message leaves the start as it is).
 */
function withSystem(messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  if (!system || messages[0]?.role === "system") return messages;
  return [{ role: "system", content: system }, ...messages];
}

/**
 * The prompt of a request to a model as Ollama builds it: the model's seed messages before the
 * conversation, its SYSTEM when the conversation has none, and its Go TEMPLATE ahead of the GGUF's chat
 * template (a request's own template and system win over the model's).
 */
export function renderModelPrompt(engine: EngineHandle, model: ModelPromptSource, input: ModelPromptInput): Promise<RenderedPrompt> {
  const system = input.system || model.system;
  const seeds = (model.messages ?? []).map((m) => ({ role: m.role, content: m.content }));
  const messages = [...seeds, ...input.messages];
  const template = input.template || model.template;
  if (!template) {
    const variables = { ...(input.think !== undefined ? { enable_thinking: input.think !== false } : {}), ...input.templateVariables };
    return renderChatPrompt(engine, {
      messages: withSystem(messages, system),
      ...(input.tools?.length ? { tools: input.tools } : {}),
      ...(Object.keys(variables).length ? { templateVariables: variables } : {}),
      ...(input.toolCallSyntax ? { toolCallSyntax: input.toolCallSyntax } : {}),
      ...(input.addGenerationPrompt !== undefined ? { addGenerationPrompt: input.addGenerationPrompt } : {}),
      ...(input.continueFinalMessage ? { continueFinalMessage: true } : {}),
    }, input.addSpecial !== undefined ? { addSpecial: input.addSpecial } : {});
  }
  const whose = input.template ? "the request's template" : `the TEMPLATE of ${modelLabel(engine.info)}`;
  return renderGoTemplatePrompt(engine, template, {
    messages, ...(system ? { system } : {}), ...(input.tools?.length ? { tools: input.tools } : {}),
    ...(input.think !== undefined ? { think: input.think } : {}), ...(input.suffix ? { suffix: input.suffix } : {}),
  }, input.addSpecial).catch((error: unknown) => {
    // A template that cannot run (bad syntax, a failing action, past its bounds) is the input's fault: a 400.
    // (Rendered off the serving thread, its errors come back as ChatTemplateErrors.)
    if (error instanceof ChatTemplateError || error instanceof TemplateSyntaxError || error instanceof TemplateExecutionError || error instanceof TemplateLimitError) {
      throw new ChatTemplateError(`${error.message} (${whose})`, { cause: error });
    }
    throw error;
  });
}

/** A request's `think` as the prompt input takes it ("max" is the strongest level a template knows). */
export function thinkSetting(think: boolean | string | null | undefined): { think?: ThinkSetting } {
  if (think === undefined || think === null) return {};
  if (typeof think === "boolean") return { think };
  return { think: think === "max" ? "high" : (think as ThinkSetting) };
}
