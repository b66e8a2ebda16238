// A look of the series index for new series (api/compat/prometheus/series-index.ts)
// reads again only the series first inserted within the slack before its
// tenant's last look: measured from the newest series seen instead, every look
// read again every series of a burst (a tenant's first minute, every series'
// first row of a UTC day) until the next new series, some 60-100 ms a look for
// 100 tenants in bench:promql, which the next query waited for.
import { expect } from 'chai';
import { scanOf } from '../../support/tenant-scans.ts';
import { SeriesIndexCache } from '../../../api/compat/prometheus/series-index.ts';
import type { TenantSeries } from '../../../api/compat/prometheus/series-index.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryRunner } from '../../../api/query/query-runner.ts';
import type { Statement } from '../../../api/query/tenant-scan.ts';
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
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('prometheus-store: the series index looks again only within the slack before its last look', function () {
  this.timeout(60_000);
  let store: Store;
  let runner: QueryRunner;
  /** The rows the index's statements answered since the counter was last reset. */
  let rows = 0;

  before(async () => {
    store = await migratedStore('series_index_slack');
    const plain = createQueryRunner(store, 10_000, silentLogger);
    runner = {
      rows: <T>(st: Statement) => plain.rows<T>(st),
      manyRows: async <T>(st: Statement) => {
        const r = await plain.manyRows<T>(st);
        if (r.ok) rows += r.value.length;
        return r;
      },
      command: (st) => plain.command(st),
    };
  });
  after(async () => {
    await store.close();
  });

  it('reads no series once a burst is older than the slack before a look, and still finds a new one', async () => {
    // refreshMs 0: every use looks for new series first (one brief statement, no background), so each use's rows are its look's.
    const cache = new SeriesIndexCache({ refreshMs: 0, slackMs: 300 });
    const get = async (): Promise<TenantSeries> => {
      const r = await cache.get(runner, store, scanOf('initech', 'metrics', nowNs()), 0);
      if (!r.ok) throw new Error(r.error.message);
      return r.value;
    };
    await insertRows(store, 'metrics', [gauge('initech', 'i-1'), gauge('initech', 'i-2'), gauge('initech', 'i-3')]);
    expect(pods(await get())).to.deep.equal(['i-1', 'i-2', 'i-3']);
    // Once a look ran more than the slack after the burst, the next answers only ClickHouse's clock (one row).
    const deadline = Date.now() + 15_000;
    for (;;) {
      await pause(100);
      rows = 0;
      await get();
      if (rows === 1) break;
      if (Date.now() > deadline) throw new Error(`a look still read ${rows} rows`);
    }
    await insertRows(store, 'metrics', [gauge('initech', 'i-4')]);
    expect(pods(await get())).to.deep.equal(['i-1', 'i-2', 'i-3', 'i-4']);
  });
});
