// POST /v1/systemone's request (ollama-js 0.6.4's SystemOneRequest): a `state` and named questions
// about it, each answered from the model's probabilities over the question's answers. The bounds keep
// one request's engine work small: every answer of every question is one engine sequence.
import { z } from "zod";
import { keepAlive } from "../schemas.ts";

/** Most questions in one request. */
export const MAX_SYSTEMONE_QUESTIONS = 16;
/** Most answers (criteria) one choice or score question may have; at least two. */
export const MAX_SYSTEMONE_CRITERIA = 32;
/** Most answers over all questions of one request: each is scored as an engine sequence of its own. */
export const MAX_SYSTEMONE_ANSWERS = 64;
/** Most characters of the state, as text (JSON is rendered with two-space indents). */
export const MAX_SYSTEMONE_STATE_CHARS = 64_000;
/** Most characters of one question's instructions, as text. */
export const MAX_SYSTEMONE_INSTRUCTIONS_CHARS = 8_000;
/** Most characters of a question's name, a choice key, or a criterion's description. */
export const MAX_SYSTEMONE_NAME_CHARS = 128;
export const MAX_SYSTEMONE_DESCRIPTION_CHARS = 2_000;

const content = z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .describe("text, or JSON (an object or an array) rendered as text");
const description = z.string().max(MAX_SYSTEMONE_DESCRIPTION_CHARS);

const choiceQuestion = z.object({
  type: z.literal("choice"),
  instructions: content,
  criteria: z.record(z.string().min(1).max(MAX_SYSTEMONE_NAME_CHARS), description.nullable())
    .describe("the choices in order, key to description (null: the key describes itself)"),
});

const noulQuestion = z.object({
  type: z.literal("noul"),
  instructions: content,
  criteria: z.object({ false: description.optional(), true: description.optional() }).optional()
    .describe("what false and true mean"),
});

const scoreQuestion = z.object({
  type: z.literal("score"),
  instructions: content,
  criteria: z.array(description).describe("the levels, lowest score first"),
});

export const questionSchema = z.discriminatedUnion("type", [choiceQuestion, noulQuestion, scoreQuestion]);
export type SystemOneQuestion = z.infer<typeof questionSchema>;

export const systemOneSchema = z.object({
  model: z.string().describe("the model that answers"),
  state: content.describe("what the questions are about: text, or JSON rendered as text"),
  questions: z.record(z.string().min(1).max(MAX_SYSTEMONE_NAME_CHARS), questionSchema).describe("the questions, by name"),
  keep_alive: keepAlive,
});
export type SystemOneRequestBody = z.infer<typeof systemOneSchema>;
