// How a saved state serves a prompt, for every tier that holds saved states (host memory, disk).
import { commonPrefixLength } from "../planning/prefix-reuse.ts";
import { markWithin } from "../planning/recurrent-marks.ts";

/**
 * Prompt tokens a state saved after `tokens` gives `prompt`. Attention-only models (`canRollBack`) keep
 * any common prefix, leaving one prompt token to process (its logits start the reply). A recurrent state
 * serves prompts that start with all of its tokens (the whole prompt only with its logits), and otherwise
 * what it shares up to the last of its marks (`marks`: the lengths they cover, ascending) before a token
 * still to process.
 */
export function usableLength(
  tokens: ArrayLike<number>, hasLogits: boolean, prompt: ArrayLike<number>, canRollBack: boolean, marks: readonly number[] = [],
): number {
  const common = commonPrefixLength(tokens, prompt);
  if (canRollBack) return Math.min(common, prompt.length - 1);
  if (common === tokens.length && (tokens.length < prompt.length || hasLogits)) return tokens.length;
  return markWithin(marks, Math.min(common, prompt.length - 1));
}

/** Whether a state for `longer` serves every prompt a state for `shorter` serves. */
export function entryServes(longer: ArrayLike<number>, shorter: ArrayLike<number>, canRollBack: boolean): boolean {
  if (longer.length < shorter.length || commonPrefixLength(longer, shorter) < shorter.length) return false;
  return canRollBack || longer.length === shorter.length;
}
