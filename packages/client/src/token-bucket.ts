/** A token bucket: `burst` tokens at most, refilled at `ratePerSec`. */
export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    private readonly ratePerSec: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#tokens = burst;
    this.#last = now();
  }

  /** Takes a token and returns 0, or returns how many ms to wait before one is available. */
  take(): number {
    const now = this.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.ratePerSec);
    this.#last = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.#tokens) / this.ratePerSec) * 1000));
  }
}
