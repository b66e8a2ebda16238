// One tenant's ingest budget on one gateway replica: a token bucket of
// decoded OTLP bytes that refills at `rate` bytes per second up to `burst`.
// A request is admitted while the bucket holds any tokens and is charged its
// bytes once they are known (after decoding), so the bucket may go below
// zero: that debt is repaid before the next request is admitted, which keeps
// the long-run accepted rate at `rate` whatever the request sizes. The debt
// is not capped: a cap would let requests larger than it through at more
// than the rate (one 16 MiB request per cap / rate seconds), so a request far
// over the burst costs its tenant size / rate seconds of refusals, as the
// limit says.

export class TokenBucket {
  #rate: number;
  #burst: number;
  #tokens: number;
  #at: number;

  /** A full bucket at `nowMs`; `rate` in bytes per second, `burst` in bytes. */
  constructor(rate: number, burst: number, nowMs: number) {
    this.#rate = rate;
    this.#burst = burst;
    this.#tokens = burst;
    this.#at = nowMs;
  }

  get rate(): number {
    return this.#rate;
  }

  get burst(): number {
    return this.#burst;
  }

  /** Tokens at `nowMs` (negative while a debt is repaid). */
  tokens(nowMs: number): number {
    this.#refill(nowMs);
    return this.#tokens;
  }

  /** Whether a request may start at `nowMs`. */
  admits(nowMs: number): boolean {
    return this.tokens(nowMs) > 0;
  }

  /** Takes `bytes` (a refund when negative); the bucket never holds more than a burst. */
  charge(bytes: number, nowMs: number): void {
    this.#refill(nowMs);
    this.#tokens = Math.min(this.#burst, this.#tokens - bytes);
  }

  /** Whole seconds until the bucket admits again (at least 1: an answer to retry "now" invites a tight loop). */
  secondsUntilAdmitted(nowMs: number): number {
    const tokens = this.tokens(nowMs);
    // Admission needs strictly more than zero: one byte's worth past the debt.
    return Math.max(1, Math.ceil((1 - tokens) / this.#rate));
  }

  /** Whether the bucket is full at `nowMs` (a full bucket is the same as a new one: it may be dropped). */
  full(nowMs: number): boolean {
    return this.tokens(nowMs) >= this.#burst;
  }

  /** New rate and burst from `nowMs`; tokens held above the new burst are dropped, a debt is kept. */
  reconfigure(rate: number, burst: number, nowMs: number): void {
    this.#refill(nowMs);
    this.#rate = rate;
    this.#burst = burst;
    this.#tokens = Math.min(burst, this.#tokens);
  }

  #refill(nowMs: number): void {
    const elapsed = nowMs - this.#at;
    if (elapsed <= 0) return;
    this.#at = nowMs;
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed * this.#rate) / 1000);
  }
}
