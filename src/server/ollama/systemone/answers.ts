// A System One answer from the log-probabilities of a question's answers: normalised over those answers
// only (the model's probability of each, given that it gives one of them).
//   choice: the most likely key, every key's probability, and that key's probability as confidence;
//   noul:   the probability of "true";
//   score:  the expected level (zero-based, fractional), each level's probability, the legend, and the
//           most likely level's probability as confidence.
import type { PlannedQuestion } from "./questions.ts";

export type SystemOneAnswer =
  | { type: "noul"; noul: number }
  | { type: "choice"; choice: string; probabilities: Record<string, number>; confidence: number }
  | { type: "score"; score: number; legend: Record<string, string>; probabilities: Record<string, number>; confidence: number };

/** Softmax of log-probabilities. */
export function normalise(logprobs: number[]): number[] {
  const max = Math.max(...logprobs);
  const weights = logprobs.map((l) => Math.exp(l - max));
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / sum);
}

export function answerOf(planned: PlannedQuestion, logprobs: number[]): SystemOneAnswer {
  const probabilities = normalise(logprobs);
  const byKey = Object.fromEntries(planned.options.map((option, i) => [option.key, probabilities[i]!]));
  const best = probabilities.indexOf(Math.max(...probabilities));
  switch (planned.question.type) {
    case "noul":
      return { type: "noul", noul: byKey.true! };
    case "choice":
      return { type: "choice", choice: planned.options[best]!.key, probabilities: byKey, confidence: probabilities[best]! };
    case "score":
      return {
        type: "score",
        score: probabilities.reduce((sum, p, level) => sum + p * level, 0),
        legend: Object.fromEntries(planned.options.map((option) => [option.key, option.description])),
        probabilities: byKey,
        confidence: probabilities[best]!,
      };
  }
}
