// vLLM passes a cross-encoder's score through the pooler's activation before it answers: a sigmoid for a
// single-label classifier head, so that scores fall in [0, 1] as Cohere's and Jina's relevance_score do.
// Its request field use_activation (true, false, or absent for the default) turns that off. llama.cpp's
// rank pooling, llama-server and so profiles a and c answer the classifier's raw logit.
import { z } from "zod";
import type { Profile } from "../profiles/profile.ts";

export const useActivationField = z.boolean().nullable().optional()
  .describe("pass each score through a sigmoid, into [0, 1] (absent: the profile's default, on for profile b as in vLLM, off elsewhere)");

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** The scores as the route answers them: through a sigmoid when the request or, failing that, the profile asks. */
export function activateScores(profile: Profile, useActivation: boolean | null | undefined, scores: number[]): number[] {
  return (useActivation ?? profile.rerankActivation ?? false) ? scores.map(sigmoid) : scores;
}
