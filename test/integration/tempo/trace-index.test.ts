// Migration 8's trace index on embedded ClickHouse: the view records each
// trace's first and last span time per tenant; a lookup through it reads
// the trace's own granules only (EXPLAIN indexes = 1), not the bloom filters
// of the tenant's whole window; another tenant's trace of the same id is
// not found; without an index row the lookup falls back to the window.
import { expect } from 'chai';
import { traceSql } from '../../../api/compat/tempo/trace-by-id.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { migratedStore, rows } from '../../support/embedded-store.ts';
import { scanOf } from '../../support/tenant-scans.ts';

const traces = 40_000;
const spansPerTrace = 5;

/** Granules the spans table's primary key and the trace_id bloom filter leave, from EXPLAIN indexes = 1. */
async function spansGranules(store: Store, sql: string, params: Record<string, unknown>): Promise<{ primaryKey: string; bloom: string }> {
  const rs = await store.client.query({ query: `EXPLAIN indexes = 1 ${sql}`, query_params: params, format: 'TabSeparatedRaw' });
  const lines = (await rs.text()).split('\n').map((l) => l.trim());
  const granules = lines.filter((l) => l.startsWith('Granules:')).map((l) => l.slice('Granules:'.length).trim());
  // ReadFromMergeTree of spans lists MinMax, Partition, PrimaryKey then each skip index; the last two are the primary key's and idx_trace_id's.
  return { primaryKey: granules.at(-2) ?? '', bloom: granules.at(-1) ?? '' };
}

describe('trace index (migration 8)', function () {
  this.timeout(120_000);
  let store: Store;
  /** The trace id (hex) of trace number `n`, as SQL. */
  const id = (n: number | string): string => `lower(hex(MD5(toString(${n}))))`;
  const now = BigInt(Date.now()) * 1_000_000n;
  const range = { startNs: now - 30n * 86_400_000_000_000n, endNs: now + 86_400_000_000_000n };
  let traceId = '';

  before(async () => {
    store = await migratedStore('trace_index');
    // One tenant's traces spread over the last 24 hours, then one span of trace 0 for another tenant.
    await store.client.command({
      query: `INSERT INTO ${store.database}.spans (tenant_id, timestamp, trace_id, span_id, parent_span_id, span_name, service_name, duration_ns)
        SELECT 'acme', now64(9) - toIntervalSecond(86400) + toIntervalMillisecond(intDiv(number, ${spansPerTrace}) * ${Math.floor(86_400_000 / traces)} + number % ${spansPerTrace}),
          ${id(`intDiv(number, ${spansPerTrace})`)}, lower(hex(substring(MD5(toString(number)), 1, 8))), '', 'op', 'svc', 1000
        FROM numbers(${traces * spansPerTrace})`,
    });
    await store.client.command({
      query: `INSERT INTO ${store.database}.spans (tenant_id, timestamp, trace_id, span_id, span_name, service_name) SELECT 'globex', now64(9), ${id(0)}, 'ffffffffffffffff', 'secret', 'secret'`,
    });
    traceId = (await rows<{ id: string }>(store, `SELECT ${id(31_337)} AS id`))[0]?.id ?? '';
  });
  after(async () => {
    await store.close();
  });

  it('records the first and last span time of every trace per tenant', async () => {
    const indexed = await rows<{ n: string; first: string; last: string }>(
      store,
      `SELECT toString(count()) AS n, toString(min(first_seen)) AS first, toString(max(last_seen)) AS last FROM ${store.database}.trace_index WHERE tenant_id = 'acme' AND trace_id = {t:String}`,
      { t: traceId },
    );
    const actual = await rows<{ first: string; last: string }>(
      store,
      `SELECT toString(min(timestamp)) AS first, toString(max(timestamp)) AS last FROM ${store.database}.spans WHERE tenant_id = 'acme' AND trace_id = {t:String}`,
      { t: traceId },
    );
    expect(indexed[0]?.first).to.equal(actual[0]?.first);
    expect(indexed[0]?.last).to.equal(actual[0]?.last);
    const total = await rows<{ n: string }>(store, `SELECT toString(uniqExact(tenant_id, trace_id)) AS n FROM ${store.database}.trace_index`);
    expect(total[0]?.n).to.equal(String(traces + 1));
  });

  it("reads the trace's own granules only; without the index, the bloom filter of every granule in the window", async () => {
    const indexed = traceSql(store, scanOf('acme', 'traces', now), traceId, range);
    const windowOnly = traceSql(store, scanOf('acme', 'traces', now), traceId, range, false);
    const withIndex = await spansGranules(store, indexed.sql, indexed.params.values);
    const without = await spansGranules(store, windowOnly.sql, windowOnly.params.values);
    const [kept, of] = withIndex.primaryKey.split('/').map(Number);
    expect(kept, `primary key with the index: ${withIndex.primaryKey}`).to.be.at.most(2);
    expect(withIndex.bloom.split('/')[1], 'bloom filter granules read with the index').to.equal(String(kept));
    const [, scanned] = without.bloom.split('/').map(Number);
    expect(scanned, `bloom filter granules read without the index: ${without.bloom}`).to.be.at.least(20);
    expect(of).to.be.greaterThan(0);
    const spans = await rows(store, indexed.sql, indexed.params.values);
    expect(spans).to.have.length(spansPerTrace);
  });

  it("finds no span of another tenant's trace with the same id", async () => {
    const zero = (await rows<{ id: string }>(store, `SELECT ${id(0)} AS id`))[0]?.id ?? '';
    const acme = traceSql(store, scanOf('acme', 'traces', now), zero, range);
    const found = await rows<{ span_name: string }>(store, acme.sql, acme.params.values);
    expect(found).to.have.length(spansPerTrace);
    expect(found.map((s) => s.span_name)).to.not.include('secret');
    const other = traceSql(store, scanOf('initech', 'traces', now), zero, range);
    expect(await rows(store, other.sql, other.params.values)).to.deep.equal([]);
  });

  it('falls back to the window when a trace has no index row', async () => {
    await store.client.command({
      query: `ALTER TABLE ${store.database}.trace_index DELETE WHERE trace_id = {t:String}`,
      query_params: { t: traceId },
      clickhouse_settings: { mutations_sync: '2' },
    });
    const q = traceSql(store, scanOf('acme', 'traces', now), traceId, range);
    expect(await rows(store, q.sql, q.params.values)).to.have.length(spansPerTrace);
  });
});
