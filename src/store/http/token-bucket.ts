// Client-side request throttling as client-go does it (QPS with a burst), so that a busy
// controller cannot flood a real API server.

export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private queue: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  /** qps <= 0 means unlimited */
  constructor(private readonly qps: number, private readonly burst: number) {
    this.tokens = Math.max(1, burst);
  }

  private refill() {
    const t = Date.now();
    this.tokens = Math.min(Math.max(1, this.burst), this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
  }

  take(): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    this.refill();
    if (this.queue.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.schedule();
    });
  }

  private schedule() {
    if (this.timer || this.queue.length === 0) return;
    const wait = Math.max(0, ((1 - this.tokens) / this.qps) * 1000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.queue.length && this.tokens >= 1) {
        this.tokens -= 1;
        this.queue.shift()!();
      }
      this.schedule();
    }, Math.ceil(wait));
  }
}
