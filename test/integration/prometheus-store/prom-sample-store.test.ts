// The PromQL engine's SampleSource over embedded ClickHouse: series resolved
// through the series index (migration 13) and its per-tenant cache, matchers
// with Prometheus' semantics, samples read by series id in RowBinary.
import { scanOf } from '../../support/tenant-scans.ts';
import type { TenantScan } from '../../../api/query/tenant-scan.ts';
import { expect } from 'chai';
import { createPromSampleSource, tooManySamples } from '../../../api/compat/prometheus/prom-sample-store.ts';
import type { PromSampleSourceOptions } from '../../../api/compat/prometheus/prom-sample-store.ts';
import type { LabelMatcher, SampleSource, StoredSeries } from '../../../api/compat/prometheus/engine/sample-source.ts';
import { SeriesIndexCache } from '../../../api/compat/prometheus/series-index.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryRunner } from '../../../api/query/query-runner.ts';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { remoteWriteScope, staleMarkerBits } from '../../../src/prometheus/remote-write-scope.ts';
import { migratedStore, rows } from '../../support/embedded-store.ts';
import { insertRows, metricRow } from '../api/support/telemetry-rows.ts';
import type { MetricSpec } from '../api/support/telemetry-rows.ts';

const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
const ns = (ms: number): bigint => BigInt(ms) * 1_000_000n;
const at = (s: number): number => T0 + s * 1000;
const m = (name: string, op: LabelMatcher['op'], value: string): LabelMatcher => ({ name, op, value });
const rw = (spec: MetricSpec): Record<string, unknown> => ({ ...metricRow(spec), scope_name: remoteWriteScope.name });
const never = new AbortController().signal;

/** The label sets of an answer as objects, for terse assertions. */
const labelObjects = (series: readonly StoredSeries[]): Record<string, string>[] => series.map((s) => Object.fromEntries(s.labels));

describe('prometheus-store: the ClickHouse SampleSource', function () {
  this.timeout(60_000);
  let store: Store;
  let runner: QueryRunner;
  let index: SeriesIndexCache;
  const scan = (tenant: string): TenantScan => scanOf(tenant, 'metrics', BigInt(Date.now()) * 1_000_000n);
  const source = (over: Partial<PromSampleSourceOptions> = {}): SampleSource =>
    createPromSampleSource({ runner, schema: store, scan: scan('acme'), visibleFromMs: 0, maxSamples: 1_000_000, index, ...over });
  const select = async (matchers: LabelMatcher[], over: Partial<PromSampleSourceOptions> = {}, minT = T0 - 1, maxT = at(600)): Promise<StoredSeries[]> => {
    const r = await source(over).select({ matchers, minT, maxT }, never);
    if (!r.ok) throw new Error(`${r.error.type}: ${r.error.message}`);
    return [...r.value];
  };

  before(async () => {
    store = await migratedStore('prom_sample_store');
    runner = createQueryRunner(store, 10_000, silentLogger);
    index = new SeriesIndexCache({ refreshMs: 0 });
    const job = { 'service.name': 'node', 'service.instance.id': 'h1:9100' };
    await insertRows(store, 'metrics', [
      // Remote-written: names and labels as sent.
      ...[0, 15, 30].map((s, i) =>
        rw({
          tenant: 'acme',
          name: 'node_cpu_seconds_total',
          type: 'sum',
          monotonic: true,
          temporality: 'cumulative',
          ns: ns(at(s)),
          value: i,
          resource: job,
          attrs: { cpu: '0', mode: 'idle' },
        }),
      ),
      ...[0, 15, 30].map((s, i) =>
        rw({
          tenant: 'acme',
          name: 'node_cpu_seconds_total',
          type: 'sum',
          monotonic: true,
          temporality: 'cumulative',
          ns: ns(at(s)),
          value: 10 + i,
          resource: job,
          attrs: { cpu: '1', mode: 'idle' },
        }),
      ),
      rw({
        tenant: 'acme',
        name: 'node_cpu_seconds_total',
        type: 'sum',
        monotonic: true,
        temporality: 'cumulative',
        ns: ns(at(0)),
        value: 5,
        resource: job,
        attrs: { cpu: '0', mode: 'user' },
      }),
      rw({ tenant: 'acme', name: 'multiline', ns: ns(at(0)), value: 1, resource: job, attrs: { text: 'a\nb' } }),
      // OTLP: names translated, attributes sanitised, job from namespace/name.
      metricRow({
        tenant: 'acme',
        name: 'http.server.requests',
        type: 'sum',
        monotonic: true,
        temporality: 'cumulative',
        ns: ns(at(0)),
        value: 7,
        resource: { 'service.name': 'api', 'service.namespace': 'shop', 'service.instance.id': 'pod-1' },
        attrs: { 'http.method': 'GET', '1st': 'x' },
      }),
      metricRow({ tenant: 'acme', name: 'queue.depth', type: 'sum', temporality: 'delta', ns: ns(at(0)), value: 1, resource: job }),
      ...[0, 60].map((s, i) =>
        metricRow({
          tenant: 'acme',
          name: 'rpc.duration',
          type: 'histogram',
          temporality: 'cumulative',
          unit: 's',
          ns: ns(at(s)),
          resource: job,
          count: 10 * (i + 1),
          sum: 2.5 * (i + 1),
          bounds: [0.1, 1],
          buckets: [2 * (i + 1), 3 * (i + 1), 5 * (i + 1)],
        }),
      ),
      metricRow({
        tenant: 'acme',
        name: 'gc.pause',
        type: 'summary',
        unit: 'ms',
        ns: ns(at(0)),
        resource: job,
        count: 4,
        sum: 9,
        quantiles: [0.5, 0.99],
        quantileValues: [1.5, 4],
      }),
      // Another tenant's series under the same names.
      rw({
        tenant: 'globex',
        name: 'node_cpu_seconds_total',
        type: 'sum',
        monotonic: true,
        temporality: 'cumulative',
        ns: ns(at(0)),
        value: 99,
        resource: job,
        attrs: { cpu: '9', mode: 'idle' },
      }),
    ]);
    // A staleness marker: a NaN whose bits JSON cannot carry.
    await store.client.command({
      query: `INSERT INTO ${queryTable(store, 'metrics')} (tenant_id, metric_name, metric_type, scope_name, resource_attributes, attributes, timestamp, value)
        SELECT 'acme', 'node_temp_celsius', 'gauge', {scope:String}, map('service.name', 'node'), map('zone', 'a'), fromUnixTimestamp64Milli(toInt64(t)), v
        FROM (SELECT arrayJoin([({a:Int64}, 20.0), ({b:Int64}, reinterpretAsFloat64({bits:UInt64}))]) AS p, p.1 AS t, p.2 AS v)`,
      query_params: { scope: remoteWriteScope.name, a: at(0), b: at(15), bits: staleMarkerBits.toString() },
    });
  });
  after(async () => {
    await store.close();
  });

  it('migrations 13 and 14 index every stored series once per tenant and day, and give each row its series id', async () => {
    const n = await rows<{ tenants: string; series: string }>(
      store,
      `SELECT toString(uniqExact(tenant_id)) AS tenants, toString(uniqExact(tenant_id, series_id)) AS series FROM ${queryTable(store, 'metric_series')}`,
    );
    expect(n).to.deep.equal([{ tenants: '2', series: '10' }]);
    // Migration 14: each metrics row carries the id its index row has.
    const orphans = await rows<{ n: string }>(
      store,
      `SELECT toString(count()) AS n FROM ${queryTable(store, 'metrics')} WHERE (tenant_id, series_id) NOT IN (SELECT tenant_id, series_id FROM ${queryTable(store, 'metric_series')})`,
    );
    expect(orphans).to.deep.equal([{ n: '0' }]);
  });

  it('selects by equality, inequality, regex and negated regex', async () => {
    const cpu = m('__name__', '=', 'node_cpu_seconds_total');
    expect(labelObjects(await select([cpu, m('cpu', '=', '1')]))).to.deep.equal([
      { __name__: 'node_cpu_seconds_total', cpu: '1', instance: 'h1:9100', job: 'node', mode: 'idle' },
    ]);
    expect((await select([cpu, m('mode', '!=', 'idle')])).map((s) => s.labels.find(([k]) => k === 'mode')?.[1])).to.deep.equal(['user']);
    expect(await select([cpu, m('cpu', '=~', '0|1')])).to.have.length(3);
    expect(await select([cpu, m('mode', '=~', 'id.e')])).to.have.length(2);
    expect(await select([cpu, m('mode', '!~', 'i[a-z]+')])).to.have.length(1);
    expect(await select([cpu, m('mode', '=~', 'idl')])).to.have.length(0);
    // A label the series lack has the value "".
    expect(await select([cpu, m('zone', '=', '')])).to.have.length(3);
    expect(await select([cpu, m('zone', '!=', '')])).to.have.length(0);
    expect(await select([cpu, m('zone', '=~', '')])).to.have.length(3);
    // Names by regex, and "." matching a newline as in Prometheus 3.
    expect(labelObjects(await select([m('__name__', '=~', 'multi.*'), m('text', '=~', 'a.b')]))).to.deep.equal([
      { __name__: 'multiline', instance: 'h1:9100', job: 'node', text: 'a\nb' },
    ]);
  });

  it('reads the samples of the selected series, ascending, as Float64 milliseconds', async () => {
    const [s] = await select([m('__name__', '=', 'node_cpu_seconds_total'), m('cpu', '=', '0'), m('mode', '=', 'idle')]);
    expect([...(s?.times ?? [])]).to.deep.equal([at(0), at(15), at(30)]);
    expect([...(s?.values ?? [])]).to.deep.equal([0, 1, 2]);
    // A range past 2^32 ms (49.7 days) reads times as Float64 rather than offsets from its start: the same samples.
    const [long] = await select([m('__name__', '=', 'node_cpu_seconds_total'), m('cpu', '=', '0'), m('mode', '=', 'idle')], {}, T0 - 60 * 86_400_000);
    expect([...(long?.times ?? [])]).to.deep.equal([at(0), at(15), at(30)]);
    expect([...(long?.values ?? [])]).to.deep.equal([0, 1, 2]);
  });

  it('names OTLP series as Prometheus does and keeps remote-written names', async () => {
    expect(labelObjects(await select([m('__name__', '=', 'http_server_requests_total')]))).to.deep.equal([
      { __name__: 'http_server_requests_total', http_method: 'GET', instance: 'pod-1', job: 'shop/api', key_1st: 'x' },
    ]);
    expect(await select([m('__name__', '=', 'http.server.requests')])).to.deep.equal([]);
    // Delta temporality has no Prometheus form.
    expect(await select([m('__name__', '=~', 'queue.*')])).to.deep.equal([]);
  });

  it('expands a histogram into cumulative buckets, _sum and _count', async () => {
    const buckets = await select([m('__name__', '=', 'rpc_duration_seconds_bucket')]);
    expect(buckets.map((s) => [s.labels.find(([k]) => k === 'le')?.[1], [...s.values]])).to.deep.equal([
      ['+Inf', [10, 20]],
      ['0.1', [2, 4]],
      ['1', [5, 10]],
    ]);
    expect((await select([m('__name__', '=', 'rpc_duration_seconds_count')])).map((s) => [...s.values])).to.deep.equal([[10, 20]]);
    expect((await select([m('__name__', '=', 'rpc_duration_seconds_sum')])).map((s) => [...s.values])).to.deep.equal([[2.5, 5]]);
    expect(await select([m('__name__', '=', 'rpc_duration_seconds_bucket'), m('le', '=', '1')])).to.have.length(1);
  });

  it('expands a summary into quantiles, _sum and _count', async () => {
    const q = await select([m('__name__', '=~', 'gc_pause_milliseconds.*')]);
    expect(q.map((s) => [Object.fromEntries(s.labels)['__name__'], Object.fromEntries(s.labels)['quantile'], [...s.values]])).to.deep.equal([
      ['gc_pause_milliseconds', '0.5', [1.5]],
      ['gc_pause_milliseconds', '0.99', [4]],
      ['gc_pause_milliseconds_count', undefined, [4]],
      ['gc_pause_milliseconds_sum', undefined, [9]],
    ]);
  });

  it('keeps a staleness marker bit-exact', async () => {
    const [s] = await select([m('__name__', '=', 'node_temp_celsius')]);
    expect(s?.values.length).to.equal(2);
    const bits = new BigUint64Array(s?.values.buffer ?? new ArrayBuffer(16), s?.values.byteOffset, 2);
    expect(bits[1]).to.equal(staleMarkerBits);
    expect(s?.values[0]).to.equal(20);
  });

  it('reads only [max(minT, visibleFromMs), maxT]', async () => {
    const cpu = [m('__name__', '=', 'node_cpu_seconds_total'), m('cpu', '=', '0'), m('mode', '=', 'idle')];
    expect([...((await select(cpu, {}, at(15), at(30)))[0]?.times ?? [])]).to.deep.equal([at(15), at(30)]);
    expect([...((await select(cpu, { visibleFromMs: at(20) }, T0 - 1, at(600)))[0]?.times ?? [])]).to.deep.equal([at(30)]);
    expect(await select(cpu, { visibleFromMs: at(700) })).to.deep.equal([]);
  });

  it("never returns another tenant's series, also once they are cached", async () => {
    const cpu = [m('__name__', '=', 'node_cpu_seconds_total')];
    expect(labelObjects(await select(cpu, { scan: scan('globex') })).map((l) => l['cpu'])).to.deep.equal(['9']);
    const acme = labelObjects(await select(cpu));
    expect(acme.map((l) => l['cpu'])).to.not.include('9');
    expect(acme).to.have.length(3);
    expect(await select([m('cpu', '=~', '9')])).to.deep.equal([]);
    expect(await select(cpu, { scan: scan('initech') })).to.deep.equal([]);
  });

  it('sees series written after its cache was filled', async () => {
    expect(await select([m('__name__', '=', 'late_gauge')])).to.deep.equal([]);
    await insertRows(store, 'metrics', [rw({ tenant: 'acme', name: 'late_gauge', ns: ns(at(5)), value: 3, resource: { 'service.name': 'late' } })]);
    expect(labelObjects(await select([m('__name__', '=', 'late_gauge')]))).to.deep.equal([{ __name__: 'late_gauge', job: 'late' }]);
  });

  it('refuses a selector over the series limit before reading samples', async () => {
    const r = await source({ maxSeries: 2 }).select({ matchers: [m('__name__', '=', 'node_cpu_seconds_total')], minT: T0, maxT: at(600) }, never);
    expect(r.ok).to.equal(false);
    if (!r.ok) {
      expect(r.error.type).to.equal('execution');
      expect(r.error.message).to.contain('more than the 2');
    }
  });

  it('refuses a select over the sample budget', async () => {
    const cpu = { matchers: [m('__name__', '=', 'node_cpu_seconds_total')], minT: T0 - 1, maxT: at(600) };
    expect((await source({ maxSamples: 7 }).select(cpu, never)).ok).to.equal(true);
    const r = await source({ maxSamples: 6 }).select(cpu, never);
    expect(r).to.deep.equal({ ok: false, error: { type: 'execution', message: tooManySamples } });
  });

  it('answers regex bombs quickly, and an invalid regex as bad_data', async () => {
    await insertRows(store, 'metrics', [rw({ tenant: 'acme', name: 'bomb', ns: ns(at(0)), value: 1, attrs: { v: 'a'.repeat(50_000) } })]);
    const started = Date.now();
    expect(await select([m('__name__', '=', 'bomb'), m('v', '=~', '(a*)*b')])).to.deep.equal([]);
    expect(await select([m('__name__', '=', 'bomb'), m('v', '=~', '(a|aa)*')])).to.have.length(1);
    expect(Date.now() - started).to.be.below(2_000);
    const r = await source().select({ matchers: [m('__name__', '=', 'bomb'), m('v', '=~', '(a{1000}){1000}')], minT: T0, maxT: at(600) }, never);
    expect(r.ok ? 'ok' : r.error.type).to.equal('bad_data');
    const bad = await source().select({ matchers: [m('__name__', '=', 'bomb'), m('v', '=~', 'a(')], minT: T0, maxT: at(600) }, never);
    expect(bad.ok ? 'ok' : bad.error.type).to.equal('bad_data');
  });

  it('matches a regex over many distinct label values in statements of bounded size, each value once', async () => {
    await store.client.command({
      query: `INSERT INTO ${queryTable(store, 'metrics')} (tenant_id, metric_name, metric_type, scope_name, resource_attributes, attributes, timestamp, value)
        SELECT 'acme', 'many_ids', 'gauge', {scope:String}, map('service.name', 'node'), map('id', concat('container-', toString(number))), fromUnixTimestamp64Milli(toInt64({t:Int64})), 1
        FROM numbers(30000)`,
      query_params: { scope: remoteWriteScope.name, t: at(0) },
    });
    const sizes: number[] = [];
    const counting: QueryRunner = {
      ...runner,
      rows: async (statement) => {
        sizes.push(JSON.stringify(statement.params.values).length);
        return runner.rows(statement);
      },
    };
    const r = await source({ runner: counting }).select(
      { matchers: [m('__name__', '=', 'many_ids'), m('id', '=~', 'container-[0-9]*7')], minT: T0 - 1, maxT: at(600) },
      never,
    );
    expect(r.ok && r.value.length).to.equal(3000);
    // 30,000 values of 15 bytes or so: more than one statement, none above the batch bound (256 KiB) and its JSON quoting.
    expect(sizes.length).to.be.greaterThan(1);
    expect(Math.max(...sizes)).to.be.below(300_000);
    // Answers are kept: the same pattern again sends nothing.
    sizes.length = 0;
    const again = await source({ runner: counting }).select(
      { matchers: [m('__name__', '=', 'many_ids'), m('id', '=~', 'container-[0-9]*7')], minT: T0 - 1, maxT: at(600) },
      never,
    );
    expect(again.ok && again.value.length).to.equal(3000);
    expect(sizes).to.deep.equal([]);
  });
});
