// The series index cache keeps the tenants in use fresh in the background
// (api/compat/prometheus/series-index.ts: a look each query starts once it
// has read its samples): a query finds a series first written since its
// tenant's last look without reading the index itself, tenants refreshed
// together never see each other's series, an idle tenant is let go, and a
// query whose index is older than the bound still waits for a fresh look.
import { scanOf } from '../../support/tenant-scans.ts';
import { expect } from 'chai';
import { SeriesIndexCache } from '../../../api/compat/prometheus/series-index.ts';
import type { TenantSeries } from '../../../api/compat/prometheus/series-index.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryBudget, Statement, TenantScan } from '../../../api/query/tenant-scan.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { remoteWriteScope } from '../../../src/prometheus/remote-write-scope.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { insertRows, metricRow } from '../api/support/telemetry-rows.ts';

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
const gauge = (tenant: string, pod: string): Record<string, unknown> => ({
  ...metricRow({ tenant, name: 'up', ns: nowNs(), value: 1, resource: { 'service.name': 'node' }, attrs: { pod } }),
  scope_name: remoteWriteScope.name,
});
const pods = (t: TenantSeries): string[] => (t.byName().get('up') ?? []).map((c) => c.e.labels.find(([k]) => k === 'pod')?.[1] ?? '').sort();

/** The budgets of the scans that start background looks: their statements are the background's. */
const refreshBudgets = new WeakSet<QueryBudget>();
const refresher = (tenant: string): TenantScan => {
  const scan = scanOf(tenant, 'metrics', BigInt(Date.now()) * 1_000_000n);
  refreshBudgets.add(scan.budget);
  return scan;
};

describe('prometheus-store: the series index refreshed in the background', function () {
  this.timeout(60_000);
  let store: Store;
  let runner: QueryRunner;
  let statements = { query: 0, background: 0 };

  before(async () => {
    store = await migratedStore('series_index_refresh');
    await insertRows(store, 'metrics', [gauge('acme', 'a-1'), gauge('globex', 'g-1')]);
  });
  after(async () => {
    await store.close();
  });
  // Each test counts the statements of its own runner (an earlier test's cache may still refresh through its own).
  beforeEach(() => {
    const plain = createQueryRunner(store, 10_000, silentLogger);
    const counts = { query: 0, background: 0 };
    // The background look's statements carry the budget of the scan that started it (see `get`).
    const count = (st: Statement): void => {
      if (refreshBudgets.has(st.budget)) counts.background += 1;
      else counts.query += 1;
    };
    statements = counts;
    runner = {
      rows: <T>(st: Statement) => {
        count(st);
        return plain.rows<T>(st);
      },
      manyRows: <T>(st: Statement) => {
        count(st);
        return plain.manyRows<T>(st);
      },
      command: (st) => plain.command(st),
    };
  });

  /** A query's use of the index: its lookup, then (its samples read) the background look it starts. */
  const get = async (cache: SeriesIndexCache, tenant: string): Promise<TenantSeries> => {
    const r = await cache.get(runner, store, scanOf(tenant, 'metrics', BigInt(Date.now()) * 1_000_000n), 0);
    if (!r.ok) throw new Error(r.error.message);
    cache.refreshInBackground(refresher(tenant));
    return r.value;
  };

  /** Polls `get` until `done` holds (deadline 10 s). */
  async function until(cache: SeriesIndexCache, tenant: string, done: (t: TenantSeries) => boolean): Promise<TenantSeries> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const t = await get(cache, tenant);
      if (done(t)) return t;
      if (Date.now() > deadline) throw new Error(`${tenant}: not seen in time, pods ${pods(t).join(',')}`);
      await new Promise((r) => setTimeout(r, 20)); // the background look reports no event: poll, bounded
    }
  }

  it('sends no look at all while nothing was written (the embedded write epoch), and finds the next insert at once', async () => {
    // refreshMs 0: without the epoch every use would look.
    await insertRows(store, 'metrics', [gauge('initech', 'i-1')]);
    const cache = new SeriesIndexCache({ refreshMs: 0, activeMs: 0, writes: store.writes });
    expect(pods(await get(cache, 'initech'))).to.deep.equal(['i-1']);
    const before = statements.query + statements.background;
    for (let i = 0; i < 3; i++) expect(pods(await get(cache, 'initech'))).to.deep.equal(['i-1']);
    expect(statements.query + statements.background - before, 'no statement while nothing was written').to.equal(0);
    await insertRows(store, 'metrics', [gauge('initech', 'i-2')]);
    expect(pods(await get(cache, 'initech')), 'the insert moved the epoch: the next use looks').to.deep.equal(['i-1', 'i-2']);
    expect(statements.query + statements.background - before).to.be.greaterThan(0);
  });

  it('finds a new series within the bound while queries read no index themselves, and keeps tenants apart', async () => {
    // A bound of 4 s: the background looks every second, so even a loaded machine's statements stay within it.
    const cache = new SeriesIndexCache({ refreshMs: 4_000, activeMs: 30_000 });
    expect(pods(await get(cache, 'acme'))).to.deep.equal(['a-1']);
    expect(pods(await get(cache, 'globex'))).to.deep.equal(['g-1']);
    statements.query = 0;
    statements.background = 0;
    await insertRows(store, 'metrics', [gauge('acme', 'a-2'), gauge('globex', 'g-2')]);
    const written = Date.now();
    const acme = await until(cache, 'acme', (t) => pods(t).includes('a-2'));
    const globex = await until(cache, 'globex', (t) => pods(t).includes('g-2'));
    // Half the bound plus a round and a statement.
    expect(Date.now() - written).to.be.below(4_000);
    expect(pods(acme)).to.deep.equal(['a-1', 'a-2']);
    expect(pods(globex)).to.deep.equal(['g-1', 'g-2']);
    expect(statements.background).to.be.above(0);
    expect(statements.query).to.equal(0);
  });

  it('lets an idle tenant go, and a query then waits for a look of its own', async () => {
    // The cache's own clock: idleness is its clock passing, moved on here rather than waited for.
    let nowMs = Date.now();
    const cache = new SeriesIndexCache({ refreshMs: 200, activeMs: 300, now: () => nowMs });
    await get(cache, 'acme');
    nowMs += 400;
    // Past activeMs: a look started now reads nothing for the idle tenant.
    statements.background = 0;
    cache.refreshInBackground(refresher('acme'));
    await insertRows(store, 'metrics', [gauge('acme', 'a-3')]);
    expect(statements.background).to.equal(0);
    statements.query = 0;
    expect(pods(await get(cache, 'acme'))).to.include('a-3');
    expect(statements.query).to.be.above(0);
  });
});
