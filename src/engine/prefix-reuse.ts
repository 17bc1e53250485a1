// Decides how much of a sequence's cached tokens a new prompt can keep.
//
// Attention-only models keep a KV entry per position, so any common prefix can be kept and the rest
// removed (llama_memory_seq_rm). Recurrent and hybrid models (LFM2's short-convolution layers, Mamba)
// hold one running state per sequence that cannot be rolled back to an earlier position: only a
// cache that is entirely a prefix of the new prompt can be continued; anything else is re-processed.
// This covers the common chat case (the previous prompt and answer are the start of the next prompt).

export function commonPrefixLength(cached: ArrayLike<number>, prompt: ArrayLike<number>): number {
  const limit = Math.min(cached.length, prompt.length);
  let i = 0;
  while (i < limit && cached[i] === prompt[i]) i++;
  return i;
}

/**
 * How many cached tokens to keep. At least one prompt token is always left to process, since the
 * first generated token needs that token's logits.
 */
export function reusableTokens(cached: ArrayLike<number>, prompt: ArrayLike<number>, canRollBack: boolean): number {
  const common = commonPrefixLength(cached, prompt);
  if (canRollBack) return Math.min(common, prompt.length - 1);
  const continuesCache = common === cached.length && cached.length < prompt.length;
  return continuesCache ? common : 0;
}
