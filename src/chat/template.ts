// Renders a model's Jinja chat template (tokenizer.chat_template) into the prompt text.
import { Template } from "@huggingface/jinja";
import type { ChatMessage, ToolDefinition } from "./types.ts";
import { prepareBounded, renderBounded, DEFAULT_JINJA_LIMITS, type JinjaLimits } from "./jinja-bounds.ts";

export interface RenderOptions {
  tools?: ToolDefinition[];
  /** End the prompt with the assistant turn's opening. Default: true. */
  addGenerationPrompt?: boolean;
  bosToken?: string;
  eosToken?: string;
  /** Extra template variables (chat_template_kwargs), e.g. enable_thinking. */
  variables?: Record<string, unknown>;
  /** Bounds on the render's steps, sizes and time. Default: DEFAULT_JINJA_LIMITS. */
  limits?: Readonly<JinjaLimits>;
}

export class ChatTemplateError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ChatTemplateError";
  }
}

// Parsing a template is far costlier than rendering it, and a model keeps its template for life.
const parsed = new Map<string, Template>();

function compile(source: string): Template {
  let template = parsed.get(source);
  if (!template) {
    try {
      template = new Template(source);
      prepareBounded(template);
    } catch (error) {
      throw new ChatTemplateError(`Cannot parse chat template: ${(error as Error).message}`, { cause: error });
    }
    if (parsed.size > 32) parsed.clear();
    parsed.set(source, template);
  }
  return template;
}

/** Assistant tool-call arguments reach templates as objects, as Hugging Face's apply_chat_template passes them. */
function normaliseMessages(messages: ChatMessage[]): unknown[] {
  return messages.map((message) => {
    if (!message.tool_calls) return message;
    return {
      ...message,
      tool_calls: message.tool_calls.map((call) => {
        const args = call.function.arguments;
        if (typeof args !== "string") return call;
        try {
          return { ...call, function: { ...call.function, arguments: JSON.parse(args) } };
        } catch {
          return call;
        }
      }),
    };
  });
}

export function renderChatTemplate(source: string, messages: ChatMessage[], options: RenderOptions = {}): string {
  try {
    return render(source, messages, options);
  } catch (error) {
    // Some templates (LFM2.5's) read the content of an assistant message that only calls tools as text
    // and fail on null: give them "" instead, as llama.cpp does for templates that require content.
    const nullContent = (m: ChatMessage) => m.role === "assistant" && m.tool_calls?.length && (m.content === null || m.content === undefined);
    if (!messages.some(nullContent)) throw error;
    return render(source, messages.map((m) => (nullContent(m) ? { ...m, content: "" } : m)), options);
  }
}

function render(source: string, messages: ChatMessage[], options: RenderOptions): string {
  const template = compile(source);
  try {
    return renderBounded(template, {
      ...options.variables,
      messages: normaliseMessages(messages),
      ...(options.tools && options.tools.length > 0 ? { tools: options.tools } : {}),
      add_generation_prompt: options.addGenerationPrompt ?? true,
      bos_token: options.bosToken ?? "",
      eos_token: options.eosToken ?? "",
    }, options.limits ?? DEFAULT_JINJA_LIMITS);
  } catch (error) {
    throw new ChatTemplateError(`Cannot render chat template: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Whether the tokenizer should add BOS to a rendered prompt: not when the template wrote it already
 * (a second BOS changes the model's input). The chat route and /tokenize share this rule so their
 * token counts agree.
 */
export function tokenizerAddsBos(prompt: string, bosText: string): boolean {
  return !(bosText && prompt.startsWith(bosText));
}

const rendersCalls = new Map<string, boolean>();

/**
 * Whether a template writes an assistant message's `tool_calls` (many only write its content). Found by
 * rendering a probe call once per template.
 */
export function templateRendersToolCalls(source: string): boolean {
  let known = rendersCalls.get(source);
  if (known === undefined) {
    const probe = "llamux_probe_tool_7f3a";
    try {
      known = renderChatTemplate(source, [
        { role: "user", content: "hi" },
        { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: probe, arguments: { a: 1 } } }] },
      ], { addGenerationPrompt: false }).includes(probe);
    } catch {
      known = false;
    }
    if (rendersCalls.size > 32) rendersCalls.clear();
    rendersCalls.set(source, known);
  }
  return known;
}

/** For models that ship no chat template: plain ChatML, the most common convention. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
