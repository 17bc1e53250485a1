// The tokens each System One answer is scored on: the question's prompt (the model's template, thinking
// off) and, for each answer, its text followed by the token that ends the assistant's turn in that
// template. The closing token makes an answer that is a prefix of another ("1" and "10") complete only
// where the model would end its reply, so short answers are not favoured for being short.
import type { EngineHandle } from "../../../engine/engine-handle.ts";
import type { ChatMessage } from "../../../chat/types.ts";
import type { ModelPromptSource } from "../../../generation/model-prompt.ts";
import { renderChat } from "../../../generation/run-chat.ts";
import type { PlannedQuestion } from "./questions.ts";

export interface QuestionTokens {
  prompt: number[];
  /** One token list per answer, in the question's order. */
  answers: number[][];
}

const PROBE_ANSWER = "probe answer";

/** A conversation's prompt as the orchestrator renders it for this model (its layers, thinking off). */
async function rendered(engine: EngineHandle, source: ModelPromptSource, messages: ChatMessage[]) {
  const { prompt } = await renderChat({ engine: async () => engine }, {
    prompt: { kind: "conversation", messages, layers: source, think: false }, output: { reasoning: false }, options: {}, limit: { overflow: "allow" },
  });
  return prompt;
}

/**
 * The token the template writes right after an assistant message (its end-of-turn control token), else
 * the vocabulary's end-of-sequence token; none when the model has neither.
 */
async function endOfTurn(engine: EngineHandle, source: ModelPromptSource): Promise<number[]> {
  const probe = await rendered(engine, source, [{ role: "user", content: "probe" }, { role: "assistant", content: PROBE_ANSWER }]);
  const at = probe.text.lastIndexOf(PROBE_ANSWER);
  const after = at >= 0 ? probe.text.slice(at + PROBE_ANSWER.length) : "";
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
    const prompt = await rendered(engine, source, planned.messages);
    const answers = await Promise.all(planned.options.map(async (option) => [
      ...await engine.tokenize(option.key, { addSpecial: false, parseSpecial: false }), ...closing,
    ]));
    return { prompt: prompt.tokens, answers };
  }));
}
