// The tenant's series index in the API process: the rows of metric_series
// (src/clickhouse/schema/metric-series.ts) within the tenant's retention,
// turned once into Prometheus series (series-labels.ts) and kept per
// (database, tenant) in an LRU bounded by an estimate of its bytes. Each
// use first fetches only what was indexed since the last look (rows whose
// first insert is newer than that look, by ClickHouse's clock, minus a slack
// for parts committed late), at most every `refreshMs`; the whole tenant is read again
// every `fullReloadMs`, which forgets series past retention. One tenant's
// entry is only ever reached by its own key, and every statement binds the
// tenant: no tenant can see another's series.
// A query should not pay that look (a statement, 10-15 ms embedded): once a
// query has read its samples, it starts (without waiting for it) one look
// for the new series of every tenant in use (queried within `activeMs`)
// whose index is half `refreshMs` old, in one statement, so the next query
// finds its index fresh. That look runs in the query's own turn (its
// tenant's and key's): no timer, so it never takes the store from another
// tenant's long query. A query waits only when its index is older than
// `refreshMs` (its tenant idle, or the store slow), as before.
// Embedded ClickHouse needs no look while nothing was written to metrics or
// metric_series: the store counts every statement that may write, per table
// (src/clickhouse/write-epoch.ts), and series are indexed by the metrics
// INSERTs themselves, so an index whose last look started at the epoch that
// still stands is as fresh as a look would make it.
import type { WriteEpoch } from '../../../src/clickhouse/write-epoch.ts';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import { metricSeriesTable } from '../../../src/clickhouse/schema/metric-series.ts';
import type { Result } from '../../../src/result.ts';
import { ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { QueryRunner } from '../../query/query-runner.ts';
import type { ScanStatement, TenantScan } from '../../query/tenant-scan.ts';
import type { ExposedSeries, IndexedIdentity } from './series-labels.ts';
import { exposedSeries } from './series-labels.ts';
import { compareLabelSets } from './engine/label-order.ts';
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
  #ranks: Map<ExposedSeries, number> | undefined;
  /** Regex results per pattern and label value (pure functions of both, so never stale). */
  readonly regexMemo = new Map<string, Map<string, boolean>>();
  bytes = 0;
  /** Unix ms of the newest first_inserted seen (ClickHouse's clock). */
  watermark = 0;
  /** ClickHouse's clock (Unix ms) when the last look that found every new series ran: rows first inserted a slack before it were all seen. */
  lookedAt = 0;
  loadedFromDay = 0;
  refreshedAt = 0;
  fullAt = 0;
  /** Embedded store: the write epoch when the last look started with no write in flight (undefined: unknown, look again). */
  epoch: number | undefined;

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

  /** Widens a known series' days; false when the series is not known. */
  widen(id: string, minDay: number, maxDay: number): boolean {
    const known = this.series.get(id);
    if (known === undefined) return false;
    known.minDay = Math.min(known.minDay, minDay);
    known.maxDay = Math.max(known.maxDay, maxDay);
    return true;
  }

  /**
   * Every exposed series' place in Prometheus' order of label sets (labels.Compare), worked out once per
   * set of series: a select sorts its answer by these numbers instead of comparing labels.
   */
  ranks(): ReadonlyMap<ExposedSeries, number> {
    if (this.#ranks === undefined) {
      const all: ExposedSeries[] = [];
      for (const s of this.series.values()) all.push(...s.exposed);
      all.sort((a, b) => compareLabelSets(a.labels, b.labels));
      this.#ranks = new Map(all.map((e, i) => [e, i]));
    }
    return this.#ranks;
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
    this.#ranks = undefined;
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
  /** A tenant queried within this long is kept fresh in the background (0: never; refreshMs 0 also turns it off). */
  readonly activeMs: number;
  readonly now?: () => number;
  /** Embedded store: its write epoch; no look is sent while it has not moved since the last (absent: every look is sent). */
  readonly writes?: Pick<WriteEpoch, 'quiet'>;
}

export const defaultSeriesIndexOptions: SeriesIndexOptions = {
  maxBytes: 256 * 1_048_576,
  refreshMs: 1_000,
  fullReloadMs: 10 * 60_000,
  slackMs: 30_000,
  activeMs: 60_000,
};

/** A series' days and newest first insert: what a refresh reads of series it may know already. */
interface BriefRow {
  tenant: string;
  id: string;
  min_day: number;
  max_day: number;
  inserted: string;
}

interface IndexRow extends BriefRow {
  name: string;
  type: StoredMetric['type'];
  unit: string;
  temporality: StoredMetric['temporality'];
  monotonic: number;
  rw: number;
  job_name: string;
  job_namespace: string;
  instance: string;
  attributes: Record<string, string>;
  bounds: number[];
  quantiles: number[];
}

/** A tenant to read, and the oldest first insert of its rows to read (absent: all). */
interface TenantBound {
  readonly id: string;
  readonly sinceMs?: number;
}

/** Where a read's statements come from: the TenantScan of the query that reads or refreshes (its budget, the tenants read bound). */
type Statements = (tenants: readonly string[]) => ScanStatement;

/**
 * The index rows of tenants from `fromDay` on: of each tenant only those first inserted at or after its
 * `sinceMs` when given; `brief`, only ids, days and first inserts; `ids`, only those series.
 */
function readRows(
  runner: QueryRunner,
  schema: SchemaTarget,
  statements: Statements,
  tenants: readonly TenantBound[],
  fromDay: number,
  what: 'brief',
): Promise<Result<BriefRow[], ApiError>>;
function readRows(
  runner: QueryRunner,
  schema: SchemaTarget,
  statements: Statements,
  tenants: readonly TenantBound[],
  fromDay: number,
  what: 'all' | { readonly ids: readonly string[] },
): Promise<Result<IndexRow[], ApiError>>;
async function readRows(
  runner: QueryRunner,
  schema: SchemaTarget,
  statements: Statements,
  tenants: readonly TenantBound[],
  fromDay: number,
  what: 'brief' | 'all' | { readonly ids: readonly string[] },
): Promise<Result<BriefRow[], ApiError>> {
  const statement = statements(tenants.map((t) => t.id));
  const p = statement.params;
  const only = tenants.length === 1 ? tenants[0] : undefined;
  const tenant = statement.tenantIs();
  let since = '';
  if (only?.sinceMs !== undefined) since = ` AND first_inserted >= fromUnixTimestamp64Milli(${p.bind(only.sinceMs, 'Int64')})`;
  else if (only === undefined && tenants.some((t) => t.sinceMs !== undefined)) {
    // Each tenant's own bound, looked up by tenant (the text stays the same whatever the tenants).
    const ids = p.bind(
      tenants.map((t) => t.id),
      'Array(String)',
    );
    const bounds = p.bind(
      tenants.map((t) => String(t.sinceMs ?? 0)),
      'Array(String)',
    );
    since = ` AND toUnixTimestamp64Milli(first_inserted) >= transform(toString(tenant_id), ${ids}, arrayMap(x -> toInt64(x), ${bounds}), toInt64(0))`;
  }
  if (typeof what === 'object') since += ` AND series_id IN CAST(${p.bind(what.ids, 'Array(String)')} AS Array(UInt64))`;
  const identityColumns =
    what === 'brief'
      ? ''
      : `any(metric_name) AS name, toString(any(metric_type)) AS type, any(unit) AS unit,
      toString(any(temporality)) AS temporality, toUInt8(any(is_monotonic)) AS monotonic, toUInt8(any(remote_write)) AS rw,
      any(job_name) AS job_name, any(job_namespace) AS job_namespace, any(instance) AS instance, any(attributes) AS attributes,
      any(explicit_bounds) AS bounds, any(quantiles) AS quantiles, `;
  // A brief read also answers ClickHouse's clock, in a row of no tenant: the next look starts a slack before it.
  const clock =
    what === 'brief'
      ? `
    UNION ALL SELECT '' AS tenant, '' AS id, toUInt32(0) AS min_day, toUInt32(0) AS max_day, toString(toUnixTimestamp64Milli(now64(3))) AS inserted`
      : '';
  const sql = `SELECT toString(tenant_id) AS tenant, toString(series_id) AS id, ${identityColumns}toUInt32(min(day)) AS min_day, toUInt32(max(day)) AS max_day,
      toString(toUnixTimestamp64Milli(max(first_inserted))) AS inserted
    FROM ${queryTable(schema, metricSeriesTable)}
    WHERE ${tenant} AND day >= ${p.bind(new Date(fromDay * dayMs).toISOString().slice(0, 10), 'Date')}${since}
    GROUP BY tenant_id, series_id${clock}`;
  return runner.manyRows<BriefRow>(statement.finish(sql));
}

/**
 * Where a tenant's next look starts: a slack before the later of its newest first insert seen and its last
 * complete look (both ClickHouse's clock). Rows first inserted earlier were committed (a part commits within
 * the slack) before one of those, so were seen. From the watermark alone, every look would read again every
 * series first inserted within the slack before the newest one: after a burst of new series (a tenant's
 * first minute, every series' first row of a UTC day) that is all of them, on every look, until the next one.
 */
const sinceOf = (entry: TenantSeries, slackMs: number): number => Math.max(0, Math.max(entry.watermark, entry.lookedAt) - slackMs);

/**
 * Adds what tenants indexed since their last looks (less the slack): ids and days first, which is all a
 * refresh usually finds (series it knows, on the same days); the identity of series it does not know yet
 * in a second statement. Rows go to the entry of the tenant each carries, never another's.
 */
async function refreshEntries(
  runner: QueryRunner,
  schema: SchemaTarget,
  statements: Statements,
  items: readonly { readonly tenantId: string; readonly entry: TenantSeries }[],
  fromDay: number,
  slackMs: number,
): Promise<Result<undefined, ApiError>> {
  const brief = await readRows(
    runner,
    schema,
    statements,
    items.map((i) => ({ id: i.tenantId, sinceMs: sinceOf(i.entry, slackMs) })),
    fromDay,
    'brief',
  );
  if (!brief.ok) return brief;
  const byTenant = new Map(items.map((i) => [i.tenantId, i.entry]));
  const unknown: string[] = [];
  const unknownTenants = new Set<string>();
  const newest = new Map<TenantSeries, number>();
  let lookedAt = 0;
  for (const r of brief.value) {
    if (r.tenant === '' && r.id === '') {
      lookedAt = Number(r.inserted);
      continue;
    }
    const entry = byTenant.get(r.tenant);
    if (entry === undefined) continue;
    newest.set(entry, Math.max(newest.get(entry) ?? 0, Number(r.inserted)));
    if (!entry.widen(r.id, r.min_day, r.max_day)) {
      unknown.push(r.id);
      unknownTenants.add(r.tenant);
    }
  }
  if (unknown.length > 0) {
    const rows = await readRows(
      runner,
      schema,
      statements,
      [...unknownTenants].map((id) => ({ id })),
      fromDay,
      { ids: unknown },
    );
    if (!rows.ok) return rows;
    for (const r of rows.value) {
      const entry = byTenant.get(r.tenant);
      if (entry !== undefined) add(entry, r);
    }
  }
  // Watermarks and looks move only once every new series is in (a failed second read looks again from the old ones).
  for (const [entry, ms] of newest) entry.watermark = Math.max(entry.watermark, ms);
  if (Number.isFinite(lookedAt)) for (const i of items) i.entry.lookedAt = Math.max(i.entry.lookedAt, lookedAt);
  return ok(undefined);
}

const identity = (r: IndexRow): IndexedIdentity => ({
  name: r.name,
  type: r.type,
  unit: r.unit,
  temporality: r.temporality,
  monotonic: r.monotonic === 1,
  remoteWrite: r.rw === 1,
  jobName: r.job_name,
  jobNamespace: r.job_namespace,
  instance: r.instance,
  attributes: r.attributes,
  bounds: r.bounds,
  quantiles: r.quantiles,
});

/** A tenant the background keeps fresh: how to reach its store, and when a query last used it. */
interface Active {
  readonly runner: QueryRunner;
  readonly schema: SchemaTarget;
  readonly tenantId: string;
  usedAt: number;
}

/** The process's cache of tenant indexes (one per API process; keyed by database and tenant). */
export class SeriesIndexCache {
  readonly #options: SeriesIndexOptions;
  readonly #entries = new Map<string, TenantSeries>();
  readonly #loading = new Map<string, Promise<Result<TenantSeries, ApiError>>>();
  readonly #active = new Map<string, Active>();
  /** The background look under way, and when the last one started. */
  #round: Promise<void> | undefined;
  #roundAt = -Infinity;

  constructor(options: Partial<SeriesIndexOptions> = {}) {
    this.#options = { ...defaultSeriesIndexOptions, ...options };
  }

  /** The index of the scan's tenant with every series that has rows from `fromDay` on, fresh within refreshMs (a load runs in the scan's budget). */
  async get(runner: QueryRunner, schema: SchemaTarget, scan: TenantScan, fromDay: number): Promise<Result<TenantSeries, ApiError>> {
    const tenantId = scan.tenantId;
    const key = `${schema.database}\x00${tenantId}`;
    const now = this.#now();
    this.#use(key, runner, schema, tenantId, now);
    const entry = this.#entries.get(key);
    // A fresh index is used as it is, even while a background look for it is under way (the look only adds newer series).
    if (entry !== undefined && entry.loadedFromDay <= fromDay && (now - entry.refreshedAt < this.#options.refreshMs || this.#unwritten(entry, schema, now))) {
      this.#touch(key, entry);
      return ok(entry);
    }
    const pending = this.#loading.get(key);
    if (pending !== undefined) return pending;
    const result = await this.#track(
      key,
      this.#load(runner, schema, () => scan.statement(), tenantId, fromDay, entry, now),
    );
    if (result.ok) this.#touch(key, result.value);
    return result;
  }

  /** Estimated bytes held by every tenant's index. */
  get bytes(): number {
    let n = 0;
    for (const e of this.#entries.values()) n += e.bytes;
    return n;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  /** The write epoch of what the index reads: metric_series, and metrics, whose INSERTs fill it (a materialized view). */
  #epoch(schema: SchemaTarget): number | undefined {
    return this.#options.writes?.quiet(queryTable(schema, 'metrics'), queryTable(schema, metricSeriesTable));
  }

  /** Whether nothing was written since the entry's last look started (then it counts as refreshed now), and no full reload is due. */
  #unwritten(entry: TenantSeries, schema: SchemaTarget, now: number): boolean {
    const epoch = this.#epoch(schema);
    if (epoch === undefined || entry.epoch !== epoch || now - entry.fullAt >= this.#options.fullReloadMs) return false;
    entry.refreshedAt = now;
    return true;
  }

  /** Registers a load as the key's own until it ends (later gets of the key wait for it). */
  #track(key: string, load: Promise<Result<TenantSeries, ApiError>>): Promise<Result<TenantSeries, ApiError>> {
    const tracked = load.finally(() => {
      if (this.#loading.get(key) === tracked) this.#loading.delete(key);
    });
    this.#loading.set(key, tracked);
    return tracked;
  }

  async #load(
    runner: QueryRunner,
    schema: SchemaTarget,
    statements: Statements,
    tenantId: string,
    fromDay: number,
    known: TenantSeries | undefined,
    now: number,
  ): Promise<Result<TenantSeries, ApiError>> {
    // Read before the look is sent: a write that starts meanwhile moves it, and the next use looks again.
    const epoch = this.#epoch(schema);
    if (known !== undefined && now - known.fullAt < this.#options.fullReloadMs && known.loadedFromDay <= fromDay) {
      const refreshed = await refreshEntries(runner, schema, statements, [{ tenantId, entry: known }], fromDay, this.#options.slackMs);
      if (!refreshed.ok) return refreshed;
      known.refreshedAt = now;
      known.epoch = epoch;
      return ok(known);
    }
    const entry = new TenantSeries();
    const rows = await readRows(runner, schema, statements, [{ id: tenantId }], fromDay, 'all');
    if (!rows.ok) return rows;
    for (const r of rows.value) add(entry, r);
    entry.refreshedAt = now;
    entry.fullAt = now;
    entry.loadedFromDay = fromDay;
    entry.epoch = epoch;
    return ok(entry);
  }

  /** Notes a tenant in use, for the background looks. */
  #use(key: string, runner: QueryRunner, schema: SchemaTarget, tenantId: string, now: number): void {
    if (this.#options.activeMs <= 0 || this.#options.refreshMs <= 0) return;
    const known = this.#active.get(key);
    if (known !== undefined && known.runner === runner) known.usedAt = now;
    else this.#active.set(key, { runner, schema, tenantId, usedAt: now });
  }

  /**
   * Starts, without waiting for it, a look for the new series of every tenant in use whose index is half
   * refreshMs old (at most one look under way, and one every quarter refreshMs). Called once a query has
   * read its samples: the look's statements run in that query's turn and budget (`scan`), while the query
   * evaluates, bound to the tenants they read.
   */
  refreshInBackground(scan: TenantScan): void {
    const now = this.#now();
    if (this.#round !== undefined || now - this.#roundAt < this.#options.refreshMs / 4 || this.#active.size === 0) return;
    this.#roundAt = now;
    this.#round = this.#refreshActive(now, (tenants) => scan.cacheStatement(tenants)).finally(() => {
      this.#round = undefined;
    });
  }

  /**
   * One background look: tenants idle for activeMs are let go; the others whose index is half refreshMs old
   * are refreshed, in one statement per store (a tenant due for its full reload gets its own).
   */
  async #refreshActive(now: number, statements: Statements): Promise<void> {
    const batches = new Map<QueryRunner, { schema: SchemaTarget; fromDay: number; items: { key: string; tenantId: string; entry: TenantSeries }[] }[]>();
    const singles: Promise<unknown>[] = [];
    for (const [key, a] of this.#active) {
      const entry = this.#entries.get(key);
      if (entry === undefined || now - a.usedAt > this.#options.activeMs) {
        this.#active.delete(key);
        continue;
      }
      if (this.#loading.has(key) || now - entry.refreshedAt < this.#options.refreshMs / 2 || this.#unwritten(entry, a.schema, now)) continue;
      if (now - entry.fullAt >= this.#options.fullReloadMs) {
        singles.push(
          this.#track(key, this.#load(a.runner, a.schema, statements, a.tenantId, entry.loadedFromDay, entry, now)).then((r) => {
            if (r.ok) this.#keep(key, r.value);
          }),
        );
        continue;
      }
      const perRunner = batches.get(a.runner) ?? [];
      batches.set(a.runner, perRunner);
      let batch = perRunner.find((b) => b.schema.database === a.schema.database);
      if (batch === undefined) {
        batch = { schema: a.schema, fromDay: entry.loadedFromDay, items: [] };
        perRunner.push(batch);
      }
      batch.fromDay = Math.min(batch.fromDay, entry.loadedFromDay);
      batch.items.push({ key, tenantId: a.tenantId, entry });
    }
    const runs = [...batches].flatMap(([runner, list]) => list.map((b) => this.#refreshBatch(runner, statements, b.schema, b.fromDay, b.items, now)));
    await Promise.all([...singles, ...runs]);
  }

  /** Looks for the new series of several tenants of one store in one statement. */
  async #refreshBatch(
    runner: QueryRunner,
    statements: Statements,
    schema: SchemaTarget,
    fromDay: number,
    items: readonly { key: string; tenantId: string; entry: TenantSeries }[],
    now: number,
  ): Promise<void> {
    const epoch = this.#epoch(schema);
    const read = refreshEntries(runner, schema, statements, items, fromDay, this.#options.slackMs).then((r) => {
      if (r.ok) {
        for (const i of items) {
          i.entry.refreshedAt = now;
          i.entry.epoch = epoch;
        }
      }
      return r;
    });
    // A query of one of these tenants meanwhile waits for this look rather than starting its own.
    await Promise.all(
      items.map((i) =>
        this.#track(
          i.key,
          read.then((r) => (r.ok ? ok(i.entry) : r)),
        ),
      ),
    );
  }

  /** Keeps a reloaded entry if its key is still cached (a background reload never brings back an evicted tenant). */
  #keep(key: string, entry: TenantSeries): void {
    if (this.#entries.has(key)) this.#entries.set(key, entry);
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

/** Adds an index row to a tenant's entry. */
function add(entry: TenantSeries, r: IndexRow): void {
  entry.upsert(r.id, r.min_day, r.max_day, () => ({ metricName: r.name, exposed: exposedSeries(identity(r)) }));
  entry.watermark = Math.max(entry.watermark, Number(r.inserted));
}
