// Renders a conversation into a prompt with an Ollama TEMPLATE, as Ollama's template.Execute does:
// a template over .Messages gets the whole conversation (and .Tools) in one run; a legacy template
// (.System, .Prompt, .Response) runs once per turn, the last run cut after .Response; a prompt with
// a suffix is a fill-in-the-middle run over .Prompt and .Suffix.
import { placeSystemMessages } from "../system-messages.ts";
import type { ChatMessage, ToolDefinition } from "../types.ts";
import type { OutputPart } from "./executor.ts";
import { cutAfterResponse, withResponseAppended } from "./ollama-legacy.ts";
import { messageValue, toolsValue } from "./ollama-values.ts";
import { GoTemplate } from "./template.ts";

export type ThinkSetting = boolean | "high" | "medium" | "low";

export interface OllamaPromptInput {
  messages: ChatMessage[];
  /** The model's SYSTEM: used when the conversation does not start with a system message. */
  system?: string;
  tools?: ToolDefinition[];
  think?: ThinkSetting;
  /** Text after the cursor (/api/generate's suffix): renders .Prompt (the last user message) and .Suffix. */
  suffix?: string;
}

/** Ollama's default for models without a template. */
export const DEFAULT_OLLAMA_TEMPLATE = "{{ .Prompt }}";

interface Prepared {
  template: GoTemplate;
  usesMessages: boolean;
  /** Legacy templates: the run for the turn being generated. */
  lastTurn: GoTemplate;
}

// Parsing dominates rendering, and a model keeps its template for life.
const prepared = new Map<string, Prepared>();

function prepare(source: string): Prepared {
  let entry = prepared.get(source);
  if (entry) return entry;
  const parsed = GoTemplate.parse(source);
  const names = parsed.identifiers();
  const usesMessages = names.includes("messages");
  const template = usesMessages || names.includes("response") ? parsed : parsed.withRoot(withResponseAppended(parsed.tree.root, source.length));
  entry = { template, usesMessages, lastTurn: template.withRoot(cutAfterResponse(template.tree.root)) };
  if (prepared.size > 32) prepared.clear();
  prepared.set(source, entry);
  return entry;
}

/** System messages joined into one, and runs of same-role messages (tool results excepted) merged. */
function collate(messages: ChatMessage[]): { system: string; collated: ChatMessage[] } {
  const systems: string[] = [];
  const collated: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === "system") systems.push(message.content ?? "");
    const previous = collated[collated.length - 1];
    if (previous && previous.role === message.role && message.role !== "tool") {
      collated[collated.length - 1] = { ...previous, content: `${previous.content ?? ""}\n\n${message.content ?? ""}` };
    } else collated.push(message);
  }
  return { system: systems.join("\n\n"), collated };
}

function thinkValues(think: ThinkSetting | undefined) {
  return { Think: think !== undefined && think !== false, ThinkLevel: typeof think === "string" ? think : "", IsThinkSet: think !== undefined };
}

/**
 * The prompt as parts: template text (which may hold special tokens) and values read from the
 * conversation (which should be tokenized as plain text). A later system message the template does not
 * write where it stands travels into a user turn (src/chat/system-messages.ts), as with chat templates.
 */
export function renderOllamaPromptParts(templateSource: string, input: OllamaPromptInput): OutputPart[] {
  if (input.suffix) return renderParts(templateSource, input);
  const text = (messages: ChatMessage[]) => renderParts(templateSource, { ...input, messages }).map((part) => part.text).join("");
  return renderParts(templateSource, { ...input, messages: placeSystemMessages(input.messages, text) });
}

function renderParts(templateSource: string, input: OllamaPromptInput): OutputPart[] {
  const { template, usesMessages, lastTurn } = prepare(templateSource);
  const withSystem = input.system && input.messages[0]?.role !== "system" ? [{ role: "system", content: input.system }, ...input.messages] : input.messages;
  const { system, collated } = collate(withSystem);
  const think = thinkValues(input.think);

  if (input.suffix) {
    const prompt = [...collated].reverse().find((message) => message.role === "user")?.content ?? "";
    return template.executeParts({ Prompt: prompt, Suffix: input.suffix, Response: "", ...think });
  }
  if (usesMessages) {
    return template.executeParts({ System: system, Messages: collated.map(messageValue), Tools: toolsValue(input.tools ?? []), Response: "", ...think });
  }

  const parts: OutputPart[] = [];
  let turn = { System: "", Prompt: "", Response: "" };
  const run = (which: GoTemplate) => {
    parts.push(...which.executeParts({ ...turn, ...think }));
    turn = { System: "", Prompt: "", Response: "" };
  };
  for (const message of collated) {
    const content = message.content ?? "";
    if (message.role === "system") {
      if (turn.Prompt || turn.Response) run(template);
      turn.System = content;
    } else if (message.role === "user") {
      if (turn.Response) run(template);
      turn.Prompt = content;
    } else if (message.role === "assistant") turn.Response = content;
  }
  run(lastTurn);
  return mergeParts(parts);
}

/** The prompt text. Throws TemplateSyntaxError or TemplateExecutionError for a bad template. */
export function renderOllamaPrompt(templateSource: string, input: OllamaPromptInput): string {
  return renderOllamaPromptParts(templateSource, input).map((part) => part.text).join("");
}

function mergeParts(parts: OutputPart[]): OutputPart[] {
  const merged: OutputPart[] = [];
  for (const part of parts) {
    const last = merged[merged.length - 1];
    if (last && last.fromData === part.fromData) merged[merged.length - 1] = { text: last.text + part.text, fromData: part.fromData };
    else merged.push({ ...part });
  }
  return merged;
}

/** What a Go template lets a model do (Ollama's inference): tools when it reads .Tools, insert with .Suffix. */
export function goTemplateCapabilities(templateSource: string): Array<"tools" | "insert" | "thinking"> {
  const names = GoTemplate.parse(templateSource).identifiers();
  const capabilities: Array<"tools" | "insert" | "thinking"> = [];
  if (names.includes("tools")) capabilities.push("tools");
  if (names.includes("suffix")) capabilities.push("insert");
  if (names.includes("thinking") || names.includes("think")) capabilities.push("thinking");
  return capabilities;
}
