// How a saved state serves a prompt, for every tier that holds saved states (host memory, disk).
import { commonPrefixLength } from "../planning/prefix-reuse.ts";

/**
 * Prompt tokens a state saved after `tokens` gives `prompt`. Attention-only models (`canRollBack`) keep
 * any common prefix, leaving one prompt token to process (its logits start the reply). A recurrent state
 * serves only prompts that start with all of its tokens, and the whole prompt only with its logits.
 */
export function usableLength(tokens: ArrayLike<number>, hasLogits: boolean, prompt: ArrayLike<number>, canRollBack: boolean): number {
  const common = commonPrefixLength(tokens, prompt);
  if (canRollBack) return Math.min(common, prompt.length - 1);
  if (common < tokens.length) return 0;
  if (tokens.length === prompt.length && !hasLogits) return 0;
  return tokens.length;
}

/** Whether a state for `longer` serves every prompt a state for `shorter` serves. */
export function entryServes(longer: ArrayLike<number>, shorter: ArrayLike<number>, canRollBack: boolean): boolean {
  if (longer.length < shorter.length || commonPrefixLength(longer, shorter) < shorter.length) return false;
  return canRollBack || longer.length === shorter.length;
}
