// How many notifications a server's messages may bring per second (a token bucket): the rest are dropped
// unread, so a server that floods its log costs the thread that serves HTTP next to nothing.
export class NotificationBudget {
  private tokens: number;
  private refilledAt: number;
  private droppedCount = 0;

  constructor(private readonly perSecond: number, private readonly now: () => number = () => performance.now()) {
    this.tokens = perSecond;
    this.refilledAt = now();
  }

  /** Notifications dropped so far. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Whether one more notification may be read now; false counts it as dropped. */
  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.refilledAt) / 1000) * this.perSecond);
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.droppedCount++;
    return false;
  }
}
