// Decides how much of a sequence's cached tokens a new prompt can keep.
//
// Attention-only models keep a KV entry per position, so any common prefix can be kept and the rest
// removed (llama_memory_seq_rm). Recurrent and hybrid models (LFM2's short-convolution layers, Mamba)
// hold one running state per sequence that cannot be rolled back to an earlier position, so they
// can keep either the whole cache (the new prompt continues it: the next turn of a chat) or a
// checkpoint: the sequence state saved after an earlier prompt, with that prompt's last logits (so the
// same prompt again samples its first token without any decode). Anything else is processed again.
// The checkpoint is taken after the prompt's last decode rather than one token earlier: splitting the
// prompt there would cost a decode of its own (25 ms of the ~1.3 s a 512-token prompt takes on the
// LFM2-350M shape, Q4_0, 2 threads), while copying the logits costs well under a millisecond.
//
// Why checkpoints: measured on the LFM2-350M shape (Q4_0, 2 threads), re-processing a 1024-token
// prompt took about 2.4 s, while saving that sequence's state took about 7 ms (12.7 MB) and restoring
// it about 2 ms. One checkpoint per sequence turns the two common misses into hits: the same prompt
// sent again (regenerate), and a next turn whose re-rendered answer differs from the generated tokens.
// (scripts/bench-prefix-reuse.ts reproduces these figures.)
// A recurrent sequence also keeps marks (planning/recurrent-marks.ts): small saves of its recurrent part
// along a long prompt, so that a prompt parting from the cached tokens keeps them up to the last mark before.
import { markWithin } from "./recurrent-marks.ts";

export function commonPrefixLength(cached: ArrayLike<number>, prompt: ArrayLike<number>): number {
  const limit = Math.min(cached.length, prompt.length);
  let i = 0;
  while (i < limit && cached[i] === prompt[i]) i++;
  return i;
}

export interface ReusePlan {
  /** Cached tokens the prompt keeps (they are not processed again). */
  keep: number;
  /** The kept tokens come from restoring the checkpoint rather than from the live cache. */
  fromCheckpoint: boolean;
  /** The kept tokens end at a mark: its recurrent state is restored and the cells after it dropped. */
  fromMark?: true;
}

/**
 * How many cached tokens a prompt can keep. From the live cache at least one prompt token is always
 * left to process, since the first generated token needs that token's logits; a checkpoint carries
 * them, so it may cover the whole prompt. `checkpointLength` is the number of leading cached tokens a
 * saved state covers, when there is one; `marks` the lengths the sequence's marks cover, ascending.
 */
export function planReuse(
  cached: ArrayLike<number>, prompt: ArrayLike<number>, canRollBack: boolean, checkpointLength = 0, marks: readonly number[] = [],
): ReusePlan {
  const common = commonPrefixLength(cached, prompt);
  if (canRollBack) return { keep: Math.min(common, prompt.length - 1), fromCheckpoint: false };
  if (common === cached.length && cached.length < prompt.length) return { keep: common, fromCheckpoint: false };
  const checkpoint = checkpointLength > 0 && common >= checkpointLength && checkpointLength <= prompt.length ? checkpointLength : 0;
  const mark = markWithin(marks, Math.min(common, prompt.length - 1));
  if (checkpoint > 0 && checkpoint >= mark) return { keep: checkpoint, fromCheckpoint: true };
  if (mark > 0) return { keep: mark, fromCheckpoint: false, fromMark: true };
  return { keep: 0, fromCheckpoint: false };
}
