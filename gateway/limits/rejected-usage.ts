// Rejected units for usage (POST /v1/tenants/:id/usage): the gateway adds up
// what it refused per tenant, UTC day, signal and reason in memory and writes
// the sums to usage_rejected_daily (a SummingMergeTree) every few seconds and
// at stop, so a flood of refusals costs one small INSERT per period, not one
// per request. A failed write keeps its sums for the next one; items with no
// valid tenant id belong to no tenant and are only counted in metrics.
import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import type { Result } from '../../src/result.ts';
import type { TenantShare } from './tenant-shares.ts';

export interface RejectedRow {
  readonly tenant_id: string;
  /** UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly signal: string;
  readonly reason: string;
  readonly items: number;
  readonly bytes: number;
}

/** Where the sums go (clickhouse-rejected-usage.ts; tests use an array). */
export interface RejectedUsageSink {
  write(rows: readonly RejectedRow[]): Promise<Result<void, string>>;
}

/** How often the sums are written. */
export const rejectedUsageFlushMs = 5000;

/** Distinct (tenant, day, signal, reason) sums held between writes; beyond, new keys wait for the next period. */
const maxPending = 100_000;

export interface RejectedUsageOptions {
  readonly flushMs: number;
  readonly onFailure?: (message: string) => void;
  /** Wall-clock ms, for the UTC day. */
  readonly wallNow?: () => number;
}

export class RejectedUsage {
  readonly #sink: RejectedUsageSink;
  readonly #options: RejectedUsageOptions;
  readonly #clock: Clock;
  #pending = new Map<string, { tenant: string; day: string; signal: string; reason: string; items: number; bytes: number }>();
  #timer: { cancel(): void } | undefined;
  #writing: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(sink: RejectedUsageSink, options: RejectedUsageOptions = { flushMs: rejectedUsageFlushMs }, clock: Clock = systemClock) {
    this.#sink = sink;
    this.#options = options;
    this.#clock = clock;
  }

  /** Adds one request's rejections (tenant '' is skipped). */
  record(signal: string, shares: readonly TenantShare[]): void {
    let day: string | undefined;
    for (const share of shares) {
      if (share.tenant === '' || share.rejected.size === 0) continue;
      day ??= new Date((this.#options.wallNow ?? Date.now)()).toISOString().slice(0, 10);
      for (const [reason, r] of share.rejected) this.#add(share.tenant, day, signal, reason, r.items, r.bytes);
    }
  }

  /** Writes every period until stop(). */
  start(): void {
    this.#schedule();
  }

  /** Writes what is pending and resolves when it is written (or failed). */
  flush(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#write());
    return this.#writing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.flush();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#clock.setTimeout(() => {
      void this.flush().then(() => {
        this.#schedule();
      });
    }, this.#options.flushMs);
  }

  #add(tenant: string, day: string, signal: string, reason: string, items: number, bytes: number): void {
    const key = `${tenant}\n${day}\n${signal}\n${reason}`;
    const sum = this.#pending.get(key);
    if (sum !== undefined) {
      sum.items += items;
      sum.bytes += bytes;
    } else if (this.#pending.size < maxPending) {
      this.#pending.set(key, { tenant, day, signal, reason, items, bytes });
    }
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const taken = this.#pending;
    this.#pending = new Map();
    const rows = [...taken.values()].map((s) => ({ tenant_id: s.tenant, day: s.day, signal: s.signal, reason: s.reason, items: s.items, bytes: s.bytes }));
    const written = await this.#sink.write(rows);
    if (written.ok) return;
    this.#options.onFailure?.(written.error);
    for (const s of taken.values()) this.#add(s.tenant, s.day, s.signal, s.reason, s.items, s.bytes);
  }
}
