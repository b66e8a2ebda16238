// The tenant's series index in the API process: the rows of metric_series
// (src/clickhouse/schema/metric-series.ts) within the tenant's retention,
// turned once into Prometheus series (series-labels.ts) and kept per
// (database, tenant) in an LRU bounded by an estimate of its bytes. Each
// use first fetches only what was indexed since the last look (rows whose
// first insert is newer than the newest one seen, minus a slack for parts
// committed late), at most every `refreshMs`; the whole tenant is read again
// every `fullReloadMs`, which forgets series past retention. One tenant's
// entry is only ever reached by its own key, and every statement binds the
// tenant: no tenant can see another's series.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import { metricSeriesTable } from '../../../src/clickhouse/schema/metric-series.ts';
import type { Result } from '../../../src/result.ts';
import { ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { QueryRunner } from '../../query/query-runner.ts';
import { SqlParams } from '../../query/sql-params.ts';
import type { ExposedSeries, IndexedIdentity } from './series-labels.ts';
import { exposedSeries } from './series-labels.ts';
import type { StoredMetric } from './series-names.ts';

const dayMs = 86_400_000;

/** The UTC day number (days since 1970-01-01) of a Unix ms time. */
export const dayOf = (ms: number): number => Math.floor(ms / dayMs);

/** One stored series: its id (decimal UInt64), the days it has rows on, and the Prometheus series it appears as. */
export interface IndexedSeries {
  readonly id: string;
  /** The first and last UTC day with rows (a series may have gaps between them). */
  minDay: number;
  maxDay: number;
  readonly metricName: string;
  readonly exposed: readonly ExposedSeries[];
}

/** One tenant's index. */
export class TenantSeries {
  readonly series = new Map<string, IndexedSeries>();
  #byName: Map<string, { readonly s: IndexedSeries; readonly e: ExposedSeries }[]> | undefined;
  /** Regex results per pattern and label value (pure functions of both, so never stale). */
  readonly regexMemo = new Map<string, Map<string, boolean>>();
  bytes = 0;
  /** Unix ms of the newest first_inserted seen (ClickHouse's clock). */
  watermark = 0;
  loadedFromDay = 0;
  refreshedAt = 0;
  fullAt = 0;

  /** Exposed series by Prometheus name. */
  byName(): ReadonlyMap<string, readonly { readonly s: IndexedSeries; readonly e: ExposedSeries }[]> {
    if (this.#byName === undefined) {
      const m = new Map<string, { s: IndexedSeries; e: ExposedSeries }[]>();
      for (const s of this.series.values()) {
        for (const e of s.exposed) {
          const list = m.get(e.name);
          if (list === undefined) m.set(e.name, [{ s, e }]);
          else list.push({ s, e });
        }
      }
      this.#byName = m;
    }
    return this.#byName;
  }

  /** Adds or widens a series; the by-name view is rebuilt on next use when the set changed. */
  upsert(id: string, minDay: number, maxDay: number, make: () => { metricName: string; exposed: ExposedSeries[] }): void {
    const known = this.series.get(id);
    if (known !== undefined) {
      known.minDay = Math.min(known.minDay, minDay);
      known.maxDay = Math.max(known.maxDay, maxDay);
      return;
    }
    const { metricName, exposed } = make();
    this.series.set(id, { id, minDay, maxDay, metricName, exposed });
    this.bytes += seriesBytes(exposed);
    this.#byName = undefined;
  }
}

/** A rough size of a series in memory: its label strings (UTF-16) and the objects around them. */
function seriesBytes(exposed: readonly ExposedSeries[]): number {
  let n = 160;
  for (const e of exposed) {
    n += 120 + e.key.length * 2;
    for (const [k, v] of e.labels) n += 48 + (k.length + v.length) * 2;
  }
  return n;
}

export interface SeriesIndexOptions {
  /** The most the cached indexes of all tenants may take (estimated bytes). */
  readonly maxBytes: number;
  /** Look for new series at most this often per tenant (0: before every use). */
  readonly refreshMs: number;
  /** Read a tenant's whole index again this often (drops series past retention). */
  readonly fullReloadMs: number;
  /** Rows whose first insert is this much older than the newest seen are fetched again (parts committed late). */
  readonly slackMs: number;
  readonly now?: () => number;
}

export const defaultSeriesIndexOptions: SeriesIndexOptions = { maxBytes: 256 * 1_048_576, refreshMs: 1_000, fullReloadMs: 10 * 60_000, slackMs: 30_000 };

interface IndexRow {
  id: string; name: string; type: StoredMetric['type']; unit: string; temporality: StoredMetric['temporality']; monotonic: number; rw: number;
  job_name: string; job_namespace: string; instance: string; attributes: Record<string, string>; bounds: number[]; quantiles: number[];
  min_day: number; max_day: number; inserted: string;
}

/** The index rows of a tenant from `fromDay` on, those first inserted at or after `sinceMs` when given. */
async function readRows(runner: QueryRunner, schema: SchemaTarget, tenantId: string, fromDay: number, sinceMs: number | undefined): Promise<Result<IndexRow[], ApiError>> {
  const p = new SqlParams();
  const since = sinceMs === undefined ? '' : ` AND first_inserted >= fromUnixTimestamp64Milli(${p.bind(sinceMs, 'Int64')})`;
  const sql = `SELECT toString(series_id) AS id, any(metric_name) AS name, toString(any(metric_type)) AS type, any(unit) AS unit,
      toString(any(temporality)) AS temporality, toUInt8(any(is_monotonic)) AS monotonic, toUInt8(any(remote_write)) AS rw,
      any(job_name) AS job_name, any(job_namespace) AS job_namespace, any(instance) AS instance, any(attributes) AS attributes,
      any(explicit_bounds) AS bounds, any(quantiles) AS quantiles, toUInt32(min(day)) AS min_day, toUInt32(max(day)) AS max_day,
      toString(toUnixTimestamp64Milli(max(first_inserted))) AS inserted
    FROM ${queryTable(schema, metricSeriesTable)}
    WHERE tenant_id = ${p.bind(tenantId, 'String')} AND day >= ${p.bind(new Date(fromDay * dayMs).toISOString().slice(0, 10), 'Date')}${since}
    GROUP BY series_id`;
  return runner.manyRows<IndexRow>(sql, p);
}

const identity = (r: IndexRow): IndexedIdentity => ({
  name: r.name, type: r.type, unit: r.unit, temporality: r.temporality, monotonic: r.monotonic === 1, remoteWrite: r.rw === 1,
  jobName: r.job_name, jobNamespace: r.job_namespace, instance: r.instance, attributes: r.attributes, bounds: r.bounds, quantiles: r.quantiles,
});

/** The process's cache of tenant indexes (one per API process; keyed by database and tenant). */
export class SeriesIndexCache {
  readonly #options: SeriesIndexOptions;
  readonly #entries = new Map<string, TenantSeries>();
  readonly #loading = new Map<string, Promise<Result<TenantSeries, ApiError>>>();

  constructor(options: Partial<SeriesIndexOptions> = {}) {
    this.#options = { ...defaultSeriesIndexOptions, ...options };
  }

  /** The tenant's index with every series that has rows from `fromDay` on, fresh within refreshMs. */
  async get(runner: QueryRunner, schema: SchemaTarget, tenantId: string, fromDay: number): Promise<Result<TenantSeries, ApiError>> {
    const key = `${schema.database}\x00${tenantId}`;
    const pending = this.#loading.get(key);
    if (pending !== undefined) return pending;
    const entry = this.#entries.get(key);
    const now = (this.#options.now ?? Date.now)();
    if (entry !== undefined && now - entry.refreshedAt < this.#options.refreshMs && entry.loadedFromDay <= fromDay) {
      this.#touch(key, entry);
      return ok(entry);
    }
    const load = this.#load(runner, schema, tenantId, fromDay, entry, now).finally(() => this.#loading.delete(key));
    this.#loading.set(key, load);
    const result = await load;
    if (result.ok) this.#touch(key, result.value);
    return result;
  }

  /** Estimated bytes held by every tenant's index. */
  get bytes(): number {
    let n = 0;
    for (const e of this.#entries.values()) n += e.bytes;
    return n;
  }

  async #load(runner: QueryRunner, schema: SchemaTarget, tenantId: string, fromDay: number, known: TenantSeries | undefined, now: number): Promise<Result<TenantSeries, ApiError>> {
    const full = known === undefined || now - known.fullAt >= this.#options.fullReloadMs || known.loadedFromDay > fromDay;
    const entry = full ? new TenantSeries() : known;
    const rows = await readRows(runner, schema, tenantId, fromDay, full ? undefined : Math.max(0, entry.watermark - this.#options.slackMs));
    if (!rows.ok) return rows;
    for (const r of rows.value) {
      entry.upsert(r.id, r.min_day, r.max_day, () => ({ metricName: r.name, exposed: exposedSeries(identity(r)) }));
      entry.watermark = Math.max(entry.watermark, Number(r.inserted));
    }
    entry.refreshedAt = now;
    if (full) {
      entry.fullAt = now;
      entry.loadedFromDay = fromDay;
    }
    return ok(entry);
  }

  /** Marks the entry most recently used and evicts the least recently used others while over the byte budget. */
  #touch(key: string, entry: TenantSeries): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    let total = this.bytes;
    for (const [k, e] of this.#entries) {
      if (total <= this.#options.maxBytes) break;
      // The entry in use stays until its query is done, even alone over the budget; it is the first to go next time.
      if (k === key) continue;
      this.#entries.delete(k);
      total -= e.bytes;
    }
    if (total > this.#options.maxBytes) this.#entries.delete(key);
  }
}
