// Summaries of repeated measurements: medians resist the noise of a shared machine better than means.

export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarize(samples: readonly number[]): Summary | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, runs: sorted.length };
}
