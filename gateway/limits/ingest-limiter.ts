// Per-tenant ingest limits of one gateway replica: a token bucket per tenant
// (token-bucket.ts) on decoded OTLP bytes, all signals together. The limits
// are global: with N live replicas (replica-count.ts) each enforces rate / N
// and burst / N, as Loki's global strategy does, which holds the tenant to
// its limit when clients spread their requests over the replicas (the usual
// case behind a load balancer). A bucket follows its tenant's effective
// settings and the replica count: it is reconfigured the first time it is
// used after either changes. Buckets that have refilled are dropped (a full
// bucket is a new one), so idle tenants cost no memory. Bytes a key sent
// before any tenant was known (an undecodable body from a key of several
// tenants, items of no tenant it may write) go to the key's own bucket
// (keyBucket): its id cannot be a tenant id, so it has the limits of a tenant
// nobody configured.
import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import { TokenBucket } from './token-bucket.ts';

const keyPrefix = 'key:';

/** The bucket of a key's bytes that belong to no tenant; ':' is not allowed in a tenant id, so no tenant shares it. */
export function keyBucket(keyName: string): string {
  return `${keyPrefix}${keyName}`;
}

/** Live gateway replicas sharing the global limits (at least 1). */
export interface ReplicaShare {
  readonly count: number;
}

interface Entry {
  readonly bucket: TokenBucket;
  generation: number;
  replicas: number;
}

export class IngestLimiter {
  readonly #settings: TenantSettingsView;
  readonly #replicas: ReplicaShare;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();

  constructor(settings: TenantSettingsView, replicas: ReplicaShare, clock: Clock = systemClock) {
    this.#settings = settings;
    this.#replicas = replicas;
    this.#clock = clock;
  }

  /** Whether a request of `tenant` may be accepted now (its bucket on this replica holds tokens). */
  admits(tenant: string): boolean {
    const entry = this.#entries.get(tenant);
    // No bucket: full.
    return entry === undefined || this.#current(tenant, entry).admits(this.#clock.now());
  }

  /** Charges `bytes` to `tenant` (a refund when negative). */
  charge(tenant: string, bytes: number): void {
    this.#bucket(tenant).charge(bytes, this.#clock.now());
  }

  /** Whole seconds until `tenant` is admitted again (at least 1). */
  retryAfterSeconds(tenant: string): number {
    return this.#bucket(tenant).secondsUntilAdmitted(this.#clock.now());
  }

  /** The refusal message for `tenant` (or a keyBucket), naming its global limit. */
  refusal(tenant: string): string {
    const { ingestBytesPerSecond, ingestBurstBytes } = this.#settings.effective(tenant).limits;
    if (tenant.startsWith(keyPrefix)) {
      return `API key ${JSON.stringify(tenant.slice(keyPrefix.length))} is over the ingest limit of the bytes it sent for no tenant (undecodable or refused bodies, items of no tenant it may write: ${ingestBytesPerSecond} bytes/s, burst ${ingestBurstBytes}, the default tenant limits, across all gateways): retry after ${this.retryAfterSeconds(tenant)} s`;
    }
    return `tenant ${JSON.stringify(tenant)} is over its ingest limit (limits.ingestBytesPerSecond ${ingestBytesPerSecond} bytes/s of decoded OTLP, limits.ingestBurstBytes ${ingestBurstBytes}, across all gateways): retry after ${this.retryAfterSeconds(tenant)} s`;
  }

  /** This replica's share of `tenant`'s limit now: bytes per second and burst. */
  share(tenant: string): { readonly rate: number; readonly burst: number } {
    const b = this.#bucket(tenant);
    return { rate: b.rate, burst: b.burst };
  }

  /** Drops the buckets that have refilled (called every few seconds). */
  sweep(): void {
    const now = this.#clock.now();
    for (const [tenant, entry] of this.#entries) if (entry.bucket.full(now)) this.#entries.delete(tenant);
  }

  /** Buckets held (tests). */
  get size(): number {
    return this.#entries.size;
  }

  #bucket(tenant: string): TokenBucket {
    const entry = this.#entries.get(tenant);
    if (entry !== undefined) return this.#current(tenant, entry);
    const { rate, burst } = this.#limits(tenant);
    const bucket = new TokenBucket(rate, burst, this.#clock.now());
    this.#entries.set(tenant, { bucket, generation: this.#settings.generation, replicas: this.#replicas.count });
    return bucket;
  }

  /** The entry's bucket, reconfigured first if the settings or the replica count changed since. */
  #current(tenant: string, entry: Entry): TokenBucket {
    const generation = this.#settings.generation;
    const replicas = this.#replicas.count;
    if (entry.generation !== generation || entry.replicas !== replicas) {
      const { rate, burst } = this.#limits(tenant);
      entry.bucket.reconfigure(rate, burst, this.#clock.now());
      entry.generation = generation;
      entry.replicas = replicas;
    }
    return entry.bucket;
  }

  #limits(tenant: string): { rate: number; burst: number } {
    const { ingestBytesPerSecond, ingestBurstBytes } = this.#settings.effective(tenant).limits;
    const n = Math.max(1, this.#replicas.count);
    return { rate: ingestBytesPerSecond / n, burst: ingestBurstBytes / n };
  }
}
