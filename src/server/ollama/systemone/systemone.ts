// POST /v1/systemone (profile a; ollama-js 0.6.4's systemone()): named choice, noul and score questions
// about a state, answered from the model's probabilities rather than from sampled text. Every answer of
// every question is scored as its own engine sequence (the prompt, then the answer's tokens forced), all
// submitted together so the scheduler decodes them in shared batches; the answers' probabilities are
// normalised per question. Answered as JSON, never streamed.
import type { Context } from "hono";
import { scoreContinuations } from "../../../generation/continuation-scores.ts";
import type { ServerDeps } from "../../deps.ts";
import { readJsonBody, validate } from "../../validation.ts";
import { doesNotSupport, findModel, keepAliveOf } from "../model-request.ts";
import { answerOf, type SystemOneAnswer } from "./answers.ts";
import { questionTokens } from "./answer-tokens.ts";
import { planQuestions } from "./questions.ts";
import { systemOneSchema } from "./schema.ts";

export function systemOne(deps: ServerDeps) {
  return async function systemOneHandler(c: Context) {
    const body = validate(systemOneSchema, await readJsonBody(c));
    const planned = planQuestions(body);
    const model = findModel(deps, body.model, "pull-hint");
    if (deps.models.embeds(model)) throw doesNotSupport(model, "completion");
    const engine = await deps.models.engine(model, {}, keepAliveOf(deps, model, body.keep_alive));
    const tokens = await questionTokens(engine, model.stored ?? {}, planned);
    const pairs = tokens.flatMap((question) => question.answers.map((continuation) => ({ prompt: question.prompt, continuation })));
    const scores = await scoreContinuations(engine, pairs, c.req.raw.signal);
    const answers: Record<string, SystemOneAnswer> = {};
    let next = 0;
    planned.forEach((question, i) => {
      const count = tokens[i]!.answers.length;
      answers[question.name] = answerOf(question, scores.slice(next, next + count).map((s) => s.logprob));
      next += count;
    });
    // Each question's prompt counts once (its answers share it); every scored answer token is output.
    const usage = {
      input_tokens: tokens.reduce((sum, question) => sum + question.prompt.length, 0),
      output_tokens: scores.reduce((sum, score) => sum + score.tokens, 0),
    };
    c.set("usage", { promptTokens: usage.input_tokens, completionTokens: usage.output_tokens });
    return c.json({ model: body.model, answers, usage });
  };
}
