// Log-probabilities of a sampled token and the most likely alternatives, from the raw logits (before
// any sampler changed them), as OpenAI's and vLLM's logprobs report them.

export interface TokenLogprob { token: number; logprob: number }
export interface Logprobs extends TokenLogprob { top: TokenLogprob[] }

export function computeLogprobs(logits: Float32Array, token: number, topCount: number): Logprobs {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  const logNormaliser = max + Math.log(sum);
  return { token, logprob: logits[token]! - logNormaliser, top: topTokens(logits, topCount).map((t) => ({ token: t, logprob: logits[t]! - logNormaliser })) };
}

/** Indices of the k largest values, largest first; a small sorted buffer beats sorting the vocabulary. */
function topTokens(values: Float32Array, k: number): number[] {
  if (k <= 0) return [];
  const best: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (best.length === k && v <= values[best[k - 1]!]!) continue;
    let at = best.length < k ? best.length : k - 1;
    if (best.length < k) best.push(i);
    while (at > 0 && values[best[at - 1]!]! < v) {
      best[at] = best[at - 1]!;
      at--;
    }
    best[at] = i;
  }
  return best;
}
