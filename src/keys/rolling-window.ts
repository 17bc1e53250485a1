// A sum over the last minute (or `spanSeconds`), kept in one-second buckets: what rpm and tpm limits read.
// Memory is bounded by the span, whatever the traffic.

export class RollingWindow {
  /** Oldest first; one per second that saw something. */
  private readonly buckets: Array<{ second: number; value: number }> = [];

  constructor(private readonly spanSeconds = 60) {}

  add(value: number, nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    this.prune(second);
    const last = this.buckets.at(-1);
    if (last?.second === second) last.value += value;
    else this.buckets.push({ second, value });
  }

  sum(nowMs: number): number {
    this.prune(Math.floor(nowMs / 1000));
    let total = 0;
    for (const bucket of this.buckets) total += bucket.value;
    return total;
  }

  /** Whole seconds until the sum is below `limit` (at least 1); 0 when it is already. */
  secondsUntilBelow(limit: number, nowMs: number): number {
    let total = this.sum(nowMs);
    if (total < limit) return 0;
    for (const bucket of this.buckets) {
      total -= bucket.value;
      if (total < limit) return Math.max(1, Math.ceil(((bucket.second + this.spanSeconds) * 1000 - nowMs) / 1000));
    }
    return this.spanSeconds;
  }

  private prune(nowSecond: number): void {
    while (this.buckets.length > 0 && this.buckets[0]!.second <= nowSecond - this.spanSeconds) this.buckets.shift();
  }
}
