// A conversation's prompt text as the model's Jinja chat template writes it: pure work on plain data, so
// that it can run off the thread that serves HTTP (src/chat/off-thread). Control-token text inside the
// messages or tools is kept apart (SpecialTextShield) and comes back as plain segments, so that only the
// template's own text yields control tokens when the caller tokenizes.
import { placeSystemMessages } from "./system-messages.ts";
import { SpecialTextShield, type PromptSegment } from "./special-text.ts";
import { ChatTemplateError, renderChatTemplate, templateRendersToolCalls } from "./template.ts";
import { TOOL_CALL_FORMATS, type ToolCallSyntax } from "./tool-calls/formats.ts";
import { nativeCallText } from "./tool-calls/native-text.ts";
import { toolCallSyntax } from "./tool-calls/template-syntax.ts";
import type { ChatMessage, ToolDefinition } from "./types.ts";

export interface ChatTextInput {
  template: string;
  /** The texts of the vocabulary's control tokens (what the shield keeps apart). */
  controlTokenTexts: string[];
  bosText: string;
  eosText: string;
  /** Names the template's owner in an error (a pulled model's template is untrusted input). */
  owner?: string;
  /** The conversation, media already replaced by their markers. */
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  addGenerationPrompt?: boolean;
  continueFinalMessage?: boolean;
  templateVariables?: Record<string, unknown>;
  /** How the model writes calls, for templates that do not render `tool_calls`. */
  toolCallSyntax?: ToolCallSyntax;
}

export interface ChatText {
  text: string;
  /** The text in the pieces to tokenize: control tokens recognised in template text, not in `plain` pieces. */
  segments: PromptSegment[];
}

/**
 * For a template that ignores an assistant message's `tool_calls`, the calls go into its content in the
 * model's own syntax, so the model still sees what it called.
 */
function withNativeCallText(messages: ChatMessage[], template: string, syntax: ToolCallSyntax | undefined): ChatMessage[] {
  if (!messages.some((m) => m.tool_calls?.length) || templateRendersToolCalls(template)) return messages;
  const format = TOOL_CALL_FORMATS[syntax ?? toolCallSyntax(template, undefined) ?? "hermes"];
  return messages.map((message) => {
    if (!message.tool_calls?.length) return message;
    const { tool_calls: calls, ...rest } = message;
    const native = nativeCallText(format, calls.map((call) => ({ name: call.function.name, arguments: call.function.arguments })));
    return { ...rest, content: message.content ? `${message.content}${native}` : native };
  });
}

/** As Hugging Face's apply_chat_template: the prompt ends right after the final message's text. */
function cutAfterFinalMessage(text: string, messages: ChatMessage[]): string {
  const finalText = (messages.at(-1)?.content ?? "").trim();
  const end = text.lastIndexOf(finalText);
  if (!finalText || end < 0) throw new ChatTemplateError("continue_final_message is set but the final message does not appear in the chat after applying the chat template!");
  return text.slice(0, end + finalText.length);
}

export function renderChatText(input: ChatTextInput): ChatText {
  const continueFinal = input.continueFinalMessage ?? false;
  if (continueFinal && input.addGenerationPrompt) throw new ChatTemplateError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.");
  const shield = new SpecialTextShield(input.controlTokenTexts);
  const tools = input.tools?.length ? shield.protect(input.tools) : undefined;
  const options = {
    ...(tools ? { tools } : {}),
    addGenerationPrompt: continueFinal ? false : input.addGenerationPrompt ?? true,
    bosToken: input.bosText,
    eosToken: input.eosText,
    ...(input.templateVariables ? { variables: input.templateVariables } : {}),
  };
  const messages = placeSystemMessages(shield.protect(withNativeCallText(input.messages, input.template, input.toolCallSyntax)),
    (conversation) => renderChatTemplate(input.template, conversation, options));
  let rendered: string;
  try {
    rendered = renderChatTemplate(input.template, messages, options);
  } catch (error) {
    if (error instanceof ChatTemplateError && input.owner) throw new ChatTemplateError(`${error.message} (${input.owner})`, { cause: error });
    throw error;
  }
  if (continueFinal) rendered = cutAfterFinalMessage(rendered, messages);
  if (!shield.used) return { text: rendered, segments: [{ text: rendered, plain: false }] };
  return { text: shield.restore(rendered), segments: shield.segments(rendered) };
}
