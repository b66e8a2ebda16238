// The port remote write metadata is written through, and a memory of what
// was written so that Prometheus' periodic resend of the same metadata
// (every minute by default) costs no INSERT.
import type { Result } from '../../src/result.ts';
import { ok } from '../../src/result.ts';
import type { MetricMetadata } from './write-request.ts';

/** One tenant's metadata rows in, written (the newest write wins per tenant and family) or why not, out. */
export interface MetadataSink {
  write(tenant: string, rows: readonly MetricMetadata[]): Promise<Result<void, string>>;
}

/** Families remembered before the memory starts again from empty (a bound, not a cache policy). */
const rememberedFamilies = 100_000;

/** Writes only the rows that differ from what this process last wrote for the tenant and family. */
export class ChangedMetadata implements MetadataSink {
  readonly #sink: MetadataSink;
  readonly #written = new Map<string, string>();

  constructor(sink: MetadataSink) {
    this.#sink = sink;
  }

  async write(tenant: string, rows: readonly MetricMetadata[]): Promise<Result<void, string>> {
    const changed = new Map<string, MetricMetadata>();
    for (const row of rows) {
      if (row.metricFamily === '') continue;
      const key = `${tenant}\u0000${row.metricFamily}`;
      if (this.#written.get(key) !== describe(row)) changed.set(key, row);
    }
    if (changed.size === 0) return ok(undefined);
    const written = await this.#sink.write(tenant, [...changed.values()]);
    if (!written.ok) return written;
    if (this.#written.size + changed.size > rememberedFamilies) this.#written.clear();
    for (const [key, row] of changed) this.#written.set(key, describe(row));
    return written;
  }
}

const describe = (row: MetricMetadata): string => `${row.type}\u0000${row.help}\u0000${row.unit}`;
