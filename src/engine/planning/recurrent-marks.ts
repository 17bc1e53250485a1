// Where a recurrent or hybrid model's prompt leaves marks: the recurrent part of its sequence state (the
// short-convolution or SSM state, no KV cells) saved at fixed positions while the prompt is processed.
//
// Such a state cannot be cut back to an earlier position, so without marks a prompt that shares only the
// start of another's (a new agent session: the same system prompt and tools, another question) is processed
// whole. Restoring a mark's recurrent state and dropping the attention cells after it puts the sequence back
// at the mark (what llama-server's context checkpoints do), so such a prompt keeps everything up to the last
// mark before it parts from the other. A mark is small (about 80 KiB on the LFM2-350M shape against 130 MiB
// for the whole state of an 11k-token prompt), so a prompt keeps one every MARK_SPACING tokens. Steps end at
// marks; at 512 tokens, llama.cpp's default micro-batch, that costs a long prompt no extra decode.

/** Tokens between marks, at least. */
export const MARK_SPACING = 512;
/**
 * Marks a sequence keeps at most: the spacing grows with the context so that they stay within it. 256 keeps
 * 512 tokens apart up to a 128k-token sequence; a full one's marks (20 MiB on the LFM2-350M shape) are a
 * small part of its KV cells.
 */
export const MAX_MARKS = 256;

/** The spacing of marks in a context of `contextTokens` (a multiple of MARK_SPACING). */
export function markSpacing(contextTokens: number): number {
  return Math.max(1, Math.ceil(contextTokens / (MARK_SPACING * MAX_MARKS))) * MARK_SPACING;
}

/** The next mark after prompt position `next`, where the step must end; 0 when none lies before the prompt's last token. */
export function nextMarkAt(next: number, promptLength: number, spacing: number): number {
  const mark = (Math.floor(next / spacing) + 1) * spacing;
  return mark < promptLength ? mark : 0;
}

/** Whether a state after `processed` prompt tokens is one to keep as a mark. */
export function isMark(processed: number, promptLength: number, spacing: number): boolean {
  return processed > 0 && processed < promptLength && processed % spacing === 0;
}

/** The longest mark (by the tokens it covers, `marks` ascending) within `limit` tokens; 0 when none. */
export function markWithin(marks: readonly number[], limit: number): number {
  let best = 0;
  for (const mark of marks) {
    if (mark > limit) break;
    best = mark;
  }
  return best;
}

/** The marks that stay valid when a sequence is cut back to `length` tokens (one at `length` itself included). */
export function marksUpTo<Mark extends { length: number }>(marks: readonly Mark[], length: number): Mark[] {
  return marks.filter((mark) => mark.length <= length);
}

/** The marks worth keeping beside a saved state of `length` tokens: those before its end, which the state itself serves. */
export function marksBefore<Mark extends { length: number }>(marks: readonly Mark[], length: number): Mark[] {
  return marks.filter((mark) => mark.length < length);
}
