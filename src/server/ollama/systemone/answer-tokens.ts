// The tokens each System One answer is scored on: the question's prompt (the model's template, thinking
// off) and, for each answer, its text followed by the token that ends the assistant's turn in that
// template. The closing token makes an answer that is a prefix of another ("1" and "10") complete only
// where the model would end its reply, so short answers are not favoured for being short.
import type { EngineHandle } from "../../../generation/engine-handle.ts";
import { renderModelPrompt, type ModelPromptSource } from "../../../generation/model-prompt.ts";
import type { PlannedQuestion } from "./questions.ts";

export interface QuestionTokens {
  prompt: number[];
  /** One token list per answer, in the question's order. */
  answers: number[][];
}

const PROBE_ANSWER = "probe answer";

/**
 * The token the template writes right after an assistant message (its end-of-turn control token), else
 * the vocabulary's end-of-sequence token; none when the model has neither.
 */
async function endOfTurn(engine: EngineHandle, source: ModelPromptSource): Promise<number[]> {
  const rendered = await renderModelPrompt(engine, source, {
    messages: [{ role: "user", content: "probe" }, { role: "assistant", content: PROBE_ANSWER }], think: false,
  });
  const at = rendered.text.lastIndexOf(PROBE_ANSWER);
  const after = at >= 0 ? rendered.text.slice(at + PROBE_ANSWER.length) : "";
  const control = engine.info.controlTokenTexts.filter((text) => text && after.startsWith(text)).sort((a, b) => b.length - a.length)[0];
  if (control) {
    const tokens = await engine.tokenize(control, { addSpecial: false, parseSpecial: true });
    if (tokens.length === 1) return tokens;
  }
  return engine.info.eosToken >= 0 ? [engine.info.eosToken] : [];
}

export async function questionTokens(engine: EngineHandle, source: ModelPromptSource, questions: PlannedQuestion[]): Promise<QuestionTokens[]> {
  const closing = await endOfTurn(engine, source);
  return Promise.all(questions.map(async (planned) => {
    const rendered = await renderModelPrompt(engine, source, { messages: planned.messages, think: false });
    const answers = await Promise.all(planned.options.map(async (option) => [
      ...await engine.tokenize(option.key, { addSpecial: false, parseSpecial: false }), ...closing,
    ]));
    return { prompt: rendered.tokens, answers };
  }));
}
