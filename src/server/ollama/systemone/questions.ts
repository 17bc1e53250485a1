// Each System One question as the model is asked it: one conversation (the state first, so that every
// question's prompt starts alike and the engine reuses it, then the question and its answers) and the
// answers it may give, each with the exact text the model is scored on.
//   choice: the criteria's keys, in the order given;
//   noul:   "true" and "false";
//   score:  the levels' numbers "0", "1", … (lowest first), with the descriptions as the legend.
import type { ChatMessage } from "../../../chat/types.ts";
import { badRequest } from "../../api-error.ts";
import {
  MAX_SYSTEMONE_ANSWERS, MAX_SYSTEMONE_CRITERIA, MAX_SYSTEMONE_INSTRUCTIONS_CHARS, MAX_SYSTEMONE_QUESTIONS, MAX_SYSTEMONE_STATE_CHARS,
  type SystemOneQuestion, type SystemOneRequestBody,
} from "./schema.ts";

export interface AnswerOption {
  /** What the answer is called in the response (a choice key, "true", or a level number). */
  key: string;
  /** Shown beside the key in the prompt. */
  description: string;
}

export interface PlannedQuestion {
  name: string;
  question: SystemOneQuestion;
  messages: ChatMessage[];
  options: AnswerOption[];
}

const SYSTEM_PROMPT = "You read a state and answer one question about it. Reply with exactly one of the listed answers, written as it is listed, and nothing else.";

/** Text as it is, JSON with two-space indents. */
export function contentText(content: SystemOneQuestion["instructions"]): string {
  return typeof content === "string" ? content : JSON.stringify(content, null, 2);
}

function optionsOf(name: string, question: SystemOneQuestion): AnswerOption[] {
  switch (question.type) {
    case "choice": {
      const options = Object.entries(question.criteria).map(([key, description]) => ({ key, description: description ?? key }));
      if (options.length < 2) throw badRequest(`question "${name}" needs at least 2 criteria to choose from, got ${options.length}`, `questions.${name}.criteria`);
      return options;
    }
    case "noul":
      return [
        { key: "true", description: question.criteria?.true ?? "yes, it holds" },
        { key: "false", description: question.criteria?.false ?? "no, it does not hold" },
      ];
    case "score":
      if (question.criteria.length < 2) throw badRequest(`question "${name}" needs at least 2 criteria (score levels), got ${question.criteria.length}`, `questions.${name}.criteria`);
      return question.criteria.map((description, level) => ({ key: String(level), description }));
  }
}

function userMessage(state: string, instructions: string, question: SystemOneQuestion, options: AnswerOption[]): string {
  const kind = question.type === "score" ? "Answer with the number of the level that fits, from 0 (lowest) up." : "Answer with one of these.";
  const lines = options.map((option) => (option.description === option.key ? `- ${option.key}` : `- ${option.key}: ${option.description}`));
  return `State:\n${state}\n\nQuestion: ${instructions}\n${kind}\n${lines.join("\n")}`;
}

/** The request's questions in order, each with its conversation and answers; a request past the bounds is a 400. */
export function planQuestions(body: SystemOneRequestBody): PlannedQuestion[] {
  const entries = Object.entries(body.questions);
  if (entries.length === 0) throw badRequest("questions must not be empty", "questions");
  if (entries.length > MAX_SYSTEMONE_QUESTIONS) throw badRequest(`questions has ${entries.length} entries, more than the limit of ${MAX_SYSTEMONE_QUESTIONS}`, "questions");
  const state = contentText(body.state);
  if (state.length > MAX_SYSTEMONE_STATE_CHARS) throw badRequest(`state has ${state.length} characters, more than the limit of ${MAX_SYSTEMONE_STATE_CHARS}`, "state");
  let answers = 0;
  const planned = entries.map(([name, question]) => {
    const instructions = contentText(question.instructions);
    if (instructions.length > MAX_SYSTEMONE_INSTRUCTIONS_CHARS) {
      throw badRequest(`question "${name}" has instructions of ${instructions.length} characters, more than the limit of ${MAX_SYSTEMONE_INSTRUCTIONS_CHARS}`, `questions.${name}.instructions`);
    }
    const options = optionsOf(name, question);
    if (options.length > MAX_SYSTEMONE_CRITERIA) {
      throw badRequest(`question "${name}" has ${options.length} criteria, more than the limit of ${MAX_SYSTEMONE_CRITERIA}`, `questions.${name}.criteria`);
    }
    answers += options.length;
    const messages: ChatMessage[] = [{ role: "system", content: SYSTEM_PROMPT }, { role: "user", content: userMessage(state, instructions, question, options) }];
    return { name, question, messages, options };
  });
  if (answers > MAX_SYSTEMONE_ANSWERS) throw badRequest(`the questions have ${answers} answers in all, more than the limit of ${MAX_SYSTEMONE_ANSWERS}`, "questions");
  return planned;
}
