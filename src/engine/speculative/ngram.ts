// Prompt lookup (n-gram speculation, no draft model): when the sequence's last n tokens occurred
// before, the tokens that followed them then are proposed now. Pays off when the output repeats the
// prompt (code edits, extraction, quoting a document); proposes nothing otherwise.
import { NGRAM_SEARCH_WINDOW } from "./options.ts";

/**
 * Up to `max` tokens that followed the latest earlier occurrence of the longest suffix of `tokens`
 * (from `ngramMax` down to `ngramMin` tokens long). Empty when no suffix occurred before.
 */
export function lookupDraft(tokens: ArrayLike<number>, max: number, ngramMax: number, ngramMin: number): number[] {
  const length = tokens.length;
  const floor = Math.max(0, length - NGRAM_SEARCH_WINDOW);
  for (let n = Math.min(ngramMax, length - 1); n >= ngramMin; n--) {
    const suffixStart = length - n;
    // latest match first: recent text is the likeliest to be repeated next
    for (let start = suffixStart - 1; start >= floor; start--) {
      let matched = 0;
      while (matched < n && tokens[start + matched] === tokens[suffixStart + matched]) matched++;
      if (matched < n) continue;
      const draft: number[] = [];
      for (let i = start + n; i < length && draft.length < max; i++) draft.push(tokens[i]!);
      if (draft.length > 0) return draft;
    }
  }
  return [];
}
