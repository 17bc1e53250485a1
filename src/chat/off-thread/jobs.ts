// The work that runs off the thread that serves HTTP: rendering a chat template (Jinja or an Ollama Go
// template) and building a grammar (a forced tool call's, a structured-output constraint's). Each is
// pure work on plain data, and each may be slow on hostile input (a template looping a million times, a
// schema with a hundred thousand enum values), so it runs on a worker thread with a time limit.
import { renderChatText, type ChatText, type ChatTextInput } from "../chat-text.ts";
import { renderOllamaPromptParts, type OllamaPromptInput } from "../go-template/ollama-prompt.ts";
import type { OutputPart } from "../go-template/executor.ts";
import { constraintGrammar, type OutputConstraint } from "../structured/constraint.ts";
import { toolCallGrammar, type ToolCallGrammarRequest } from "../structured/tool-call-grammar.ts";

/** The grammar a reply must follow: a forced tool call's or a structured-output constraint's. */
export type GrammarJob = { kind: "tools"; request: ToolCallGrammarRequest } | { kind: "constraint"; constraint: OutputConstraint };

export function buildGrammar(job: GrammarJob): string {
  return job.kind === "tools" ? toolCallGrammar(job.request) : constraintGrammar(job.constraint);
}

export const JOBS = {
  chatText: (input: ChatTextInput): ChatText => renderChatText(input),
  goPrompt: (input: { template: string; prompt: OllamaPromptInput }): OutputPart[] => renderOllamaPromptParts(input.template, input.prompt),
  grammar: (job: GrammarJob): string => buildGrammar(job),
};

export type JobKind = keyof typeof JOBS;
export type JobInput<K extends JobKind> = Parameters<(typeof JOBS)[K]>[0];
export type JobResult<K extends JobKind> = ReturnType<(typeof JOBS)[K]>;
