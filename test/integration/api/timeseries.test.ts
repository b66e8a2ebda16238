// POST /v1/tenants/:tenant_id/timeseries: every operator and metric type
// against values worked out by hand in the comments.
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { insertRows, metricRow, secondsNs } from './support/telemetry-rows.ts';
import type { MetricSpec } from './support/telemetry-rows.ts';
import { staleMarkerBits } from '../../../src/prometheus/remote-write-scope.ts';

const T0 = 1_794_999_960; // a whole minute
const at = (s: number): bigint => secondsNs(T0 + s);
const cart = { 'service.name': 'cart' };
const web = { 'service.name': 'web' };

const gauge = (s: number, value: number, resource: Record<string, string>, tenant = 'acme'): MetricSpec => ({
  tenant,
  name: 'latency.gauge',
  type: 'gauge',
  unit: 'ms',
  description: 'request latency',
  ns: at(s),
  value,
  resource,
  attrs: { route: resource === cart ? '/cart' : '/' },
});

describe('api/timeseries', () => {
  let h: Harness;
  const q = (body: Record<string, unknown>, key?: string): Promise<Reply> =>
    h.post('/v1/tenants/acme/timeseries', { startTime: T0, endTime: T0 + 180, interval: 60, ...body }, key);
  /** Each series' values as numbers, with null where the series lists the bucket in emptyBuckets (after checking that its value there is 0). */
  const values = async (body: Record<string, unknown>): Promise<unknown> => {
    const reply = await q(body);
    expect(reply.status, reply.text).to.equal(200);
    return (field(reply.body, 'series') as { values: unknown[]; emptyBuckets: number[] }[]).map((s) => {
      // API.md: "values: array of numbers".
      for (const v of s.values) expect(v, reply.text).to.be.a('number');
      for (const i of s.emptyBuckets) expect(s.values[i], reply.text).to.equal(0);
      return s.values.map((v, i) => (s.emptyBuckets.includes(i) ? null : v));
    });
  };

  before(async () => {
    h = await startHarness('timeseries');
    const bounds = [10, 20, 50, 100];
    await insertRows(h.store, 'metrics', [
      // Gauge, two services. Bucket 0: cart 10, 20 and web 100; bucket 1: web 200, 300; bucket 2: cart 5.
      ...[
        gauge(5, 10, cart),
        gauge(30, 20, cart),
        gauge(20, 100, web),
        gauge(70, 200, web),
        gauge(100, 300, web),
        gauge(150, 5, cart),
        gauge(30, 1e9, cart, 'globex'),
      ].map(metricRow),
      // Cumulative counter with a reset at +70 s; the point at -30 s only serves as the predecessor.
      ...[
        [-30, 100],
        [10, 130],
        [50, 160],
        [70, 20],
        [110, 50],
        [130, 80],
      ].map(([s, v]) =>
        metricRow({
          tenant: 'acme',
          name: 'requests',
          type: 'sum',
          temporality: 'cumulative',
          monotonic: true,
          unit: '{requests}',
          ns: at(s ?? 0),
          value: v ?? 0,
        }),
      ),
      // Delta histogram in bucket 0: counts 10, 20, 30, 38, 2 over bounds 10, 20, 50, 100; sum 4000.
      metricRow({
        tenant: 'acme',
        name: 'http.duration',
        type: 'histogram',
        temporality: 'delta',
        unit: 'ms',
        ns: at(10),
        count: 60,
        sum: 2400,
        min: 1,
        max: 150,
        bounds,
        buckets: [6, 12, 18, 23, 1],
      }),
      metricRow({
        tenant: 'acme',
        name: 'http.duration',
        type: 'histogram',
        temporality: 'delta',
        unit: 'ms',
        ns: at(40),
        count: 40,
        sum: 1600,
        min: 2,
        max: 120,
        bounds,
        buckets: [4, 8, 12, 15, 1],
      }),
      // Exponential histogram, scale 0: (2,4] ×10 and (4,8] ×10.
      metricRow({
        tenant: 'acme',
        name: 'exp.size',
        type: 'exponential_histogram',
        temporality: 'delta',
        unit: 'By',
        ns: at(10),
        count: 20,
        sum: 100,
        expScale: 0,
        expPosOffset: 1,
        expPos: [10, 10],
      }),
      // Summary: p95 90 then 110 in bucket 0.
      metricRow({
        tenant: 'acme',
        name: 'rpc.summary',
        type: 'summary',
        unit: 's',
        ns: at(10),
        count: 10,
        sum: 50,
        quantiles: [0.5, 0.95],
        quantileValues: [10, 90],
      }),
      metricRow({
        tenant: 'acme',
        name: 'rpc.summary',
        type: 'summary',
        unit: 's',
        ns: at(20),
        count: 20,
        sum: 150,
        quantiles: [0.5, 0.95],
        quantileValues: [20, 110],
      }),
    ]);
  });
  after(async () => {
    await h.close();
  });

  it("aggregates a gauge with every plain operator; empty buckets are 0 and listed in emptyBuckets (count's are 0 and not listed)", async () => {
    const m = { metrics: ['latency.gauge'] };
    expect(await values({ queries: [{ ...m, operator: 'avg' }] })).to.deep.equal([[130 / 3, 250, 5]]);
    expect(await values({ queries: [m] })).to.deep.equal([[130 / 3, 250, 5]]); // avg is the default
    expect(await values({ queries: { ...m, operator: 'sum' } })).to.deep.equal([[130, 500, 5]]);
    expect(await values({ queries: [{ ...m, operator: 'min' }] })).to.deep.equal([[10, 200, 5]]);
    expect(await values({ queries: [{ ...m, operator: 'max' }] })).to.deep.equal([[100, 300, 5]]);
    expect(await values({ queries: [{ ...m, operator: 'count' }] })).to.deep.equal([[3, 2, 1]]);
    expect(await values({ queries: [{ ...m, operator: 'last' }] })).to.deep.equal([[20, 300, 5]]);
    // Linear interpolation between ranks: bucket 0 sorted 10, 20, 100 → position 1.9 → 20 + 0.9 × 80 = 92; bucket 1 → 200 + 0.95 × 100.
    const p95 = (await values({ queries: [{ ...m, operator: 'p95' }] })) as number[][];
    expect(p95[0]?.[0]).to.be.closeTo(92, 1e-9);
    expect(p95[0]?.[1]).to.be.closeTo(295, 1e-9);
    // 30 s buckets: [10, 100] → 55; [20]; [200]; [300]; nothing; [5].
    expect(await values({ queries: [{ ...m, operator: 'p50' }], interval: 30 })).to.deep.equal([[55, 20, 200, 300, null, 5]]);
    expect(await values({ queries: [{ ...m, operator: 'count' }], interval: 30 })).to.deep.equal([[2, 1, 1, 1, 0, 1]]);
  });

  it('says in /v1/openapi.json what it answers: values are numbers, empty buckets listed by index', async () => {
    const doc = await h.call('GET', '/v1/openapi.json', { key: null });
    const series = field(doc.body, 'components', 'schemas', 'TimeseriesResult', 'properties', 'series', 'items') as {
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(series.required).to.include.members(['values', 'emptyBuckets']);
    expect(field(series.properties, 'values', 'items')).to.deep.equal({ type: 'number' });
    expect(field(series.properties, 'emptyBuckets', 'items')).to.include({ type: 'integer' });
    const reply = await q({ queries: [{ metrics: ['latency.gauge', 'http.duration'], operator: 'max' }] });
    expect(reply.text).not.to.contain('null');
  });

  it('groups by attributes into labelled series with suggested labels', async () => {
    const reply = await q({ queries: [{ metrics: ['latency.gauge'], groupBy: ['service.name'], operator: 'sum' }] });
    const series = (field(reply.body, 'series') as { labels: Record<string, string> }[]).sort((a, b) =>
      String(a.labels['service.name']).localeCompare(String(b.labels['service.name'])),
    );
    expect(series).to.deep.equal([
      {
        name: 'latency.gauge',
        suggested_label: 'latency.gauge{service.name="cart"}',
        unit: { name: 'millisecond', short_name: 'ms' },
        labels: cart,
        length: 3,
        values: [30, 0, 5],
        emptyBuckets: [1],
      },
      {
        name: 'latency.gauge',
        suggested_label: 'latency.gauge{service.name="web"}',
        unit: { name: 'millisecond', short_name: 'ms' },
        labels: web,
        length: 3,
        values: [100, 500, 0],
        emptyBuckets: [2],
      },
    ]);
    const two = await q({ queries: [{ metrics: ['latency.gauge'], groupBy: ['service.name', 'route'], operator: 'count' }] });
    expect((field(two.body, 'series') as { suggested_label: string }[]).map((s) => s.suggested_label).sort()).to.deep.equal([
      'latency.gauge{service.name="cart",route="/cart"}',
      'latency.gauge{service.name="web",route="/"}',
    ]);
  });

  it('filters by attributes', async () => {
    expect(await values({ queries: [{ metrics: ['latency.gauge'], attributes: { 'service.name': 'web' }, operator: 'max' }] })).to.deep.equal([
      [100, 300, null],
    ]);
    expect(await values({ queries: [{ metrics: ['latency.gauge'], attributes: { route: ['/cart', '/nowhere'] }, operator: 'max' }] })).to.deep.equal([
      [20, null, 5],
    ]);
    expect(await values({ queries: [{ metrics: ['latency.gauge'], attributes: { 'service.name': 'none' } }] })).to.deep.equal([]);
  });

  it('computes rate and increase of a cumulative counter across a reset', async () => {
    // Deltas: +30 (10 s), +30 (50 s) | reset → +20 (70 s), +30 (110 s) | +30 (130 s).
    expect(await values({ queries: [{ metrics: ['requests'], operator: 'increase' }] })).to.deep.equal([[60, 50, 30]]);
    expect(await values({ queries: [{ metrics: ['requests'], operator: 'rate' }] })).to.deep.equal([[1, 50 / 60, 0.5]]);
  });

  it('takes percentiles, averages and counts from histogram buckets', async () => {
    const m = ['http.duration'];
    // Summed buckets 10, 20, 30, 38, 2 (total 100): rank 95 lies in (50, 100] after 60 → 50 + 50 × 35/38.
    expect(await values({ queries: [{ metrics: m, operator: 'p95' }] })).to.deep.equal([[50 + (50 * 35) / 38, null, null]]);
    // Rank 50 lies in (20, 50] after 30 → 20 + 30 × 20/30 = 40.
    expect(await values({ queries: [{ metrics: m, operator: 'p50' }] })).to.deep.equal([[40, null, null]]);
    expect(await values({ queries: [{ metrics: m, operator: 'avg' }] })).to.deep.equal([[40, null, null]]);
    expect(await values({ queries: [{ metrics: m, operator: 'count' }] })).to.deep.equal([[100, 0, 0]]);
    expect(await values({ queries: [{ metrics: m, operator: 'sum' }] })).to.deep.equal([[4000, null, null]]);
    expect(await values({ queries: [{ metrics: m, operator: 'max' }] })).to.deep.equal([[150, null, null]]);
    expect(await values({ queries: [{ metrics: m, operator: 'min' }] })).to.deep.equal([[1, null, null]]);
    expect(await values({ queries: [{ metrics: m, operator: 'rate' }] })).to.deep.equal([[100 / 60, null, null]]);
  });

  it('takes percentiles from exponential histograms and summaries', async () => {
    expect(await values({ queries: [{ metrics: ['exp.size'], operator: 'p75' }] })).to.deep.equal([[6, null, null]]);
    expect(await values({ queries: [{ metrics: ['rpc.summary'], operator: 'p95' }] })).to.deep.equal([[100, null, null]]);
    expect(await values({ queries: [{ metrics: ['rpc.summary'], operator: 'p50' }] })).to.deep.equal([[15, null, null]]);
  });

  it('returns times in ms, units, metadata and the normalised query', async () => {
    const reply = await q({
      queries: [
        { metrics: ['http.duration', 'exp.size', 'missing.metric'], operator: 'p99' },
        { metrics: ['requests'], operator: 'rate' },
      ],
    });
    expect(field(reply.body, 'times')).to.deep.equal([T0 * 1000, (T0 + 60) * 1000, (T0 + 120) * 1000]);
    expect((field(reply.body, 'series') as { unit: unknown }[]).map((s) => s.unit)).to.deep.equal([
      { name: 'millisecond', short_name: 'ms' },
      { name: 'byte', short_name: 'B' },
      { name: 'requests', short_name: 'requests' },
    ]);
    expect(field(reply.body, 'metadata', 2)).to.deep.equal({
      name: 'requests',
      labels: {},
      type: 'sum',
      temporality: 'cumulative',
      monotonic: true,
      unit: '{requests}',
      description: '',
      operator: 'rate',
    });
    expect(field(reply.body, 'metadata', 0, 'type')).to.equal('histogram');
    // The same description from the aggregating SELECT (max is aggregated in SQL, rate is not).
    const aggregated = await q({ queries: { metrics: ['requests'], operator: 'max' } });
    expect(field(aggregated.body, 'metadata', 0)).to.deep.equal({
      name: 'requests',
      labels: {},
      type: 'sum',
      temporality: 'cumulative',
      monotonic: true,
      unit: '{requests}',
      description: '',
      operator: 'max',
    });
    expect(field(reply.body, 'query')).to.deep.equal({
      queries: [
        { metrics: ['http.duration', 'exp.size', 'missing.metric'], groupBy: [], operator: 'p99', attributes: {} },
        { metrics: ['requests'], groupBy: [], operator: 'rate', attributes: {} },
      ],
      startTime: T0,
      endTime: T0 + 180,
      interval: 60,
    });
  });

  it('picks the default interval: the smallest giving at most 300 points', async () => {
    const hour = await h.post('/v1/tenants/acme/timeseries', { startTime: T0, endTime: T0 + 3600, queries: { metrics: ['latency.gauge'] } });
    expect(field(hour.body, 'query', 'interval')).to.equal(15);
    expect(field(hour.body, 'times')).to.have.length(240);
    expect(field(hour.body, 'series', 0, 'length')).to.equal(240);
    const ms = await h.post('/v1/tenants/acme/timeseries', { startTime: T0 * 1000, endTime: (T0 + 300) * 1000, queries: { metrics: ['latency.gauge'] } });
    expect(field(ms.body, 'query', 'interval')).to.equal(1);
    const open = await h.post('/v1/tenants/acme/timeseries', { startTime: Math.floor(Date.now() / 1000) - 600, queries: { metrics: ['latency.gauge'] } });
    expect(open.status).to.equal(200);
    expect(field(open.body, 'query', 'interval')).to.equal(5);
  });

  it('answers 400 to bad queries and too many points', async () => {
    for (const body of [
      { queries: [] },
      { queries: [{}] },
      { queries: [{ metrics: [] }] },
      { queries: [{ metrics: 'latency.gauge' }] },
      { queries: [{ metrics: ['x'], operator: 'median' }] },
      { queries: [{ metrics: ['x'], groupBy: 'service.name' }] },
      { queries: [{ metrics: ['x'] }], interval: 0 },
      { queries: [{ metrics: ['x'] }], interval: 0.01 },
      { queries: [{ metrics: ['x'] }], startTime: T0 + 200 },
      { queries: [{ metrics: ['x'] }], step: 60 },
      { queries: [{ metrics: ['x'], tags: {} }] },
    ]) {
      const reply = await q(body);
      expect(reply.status, JSON.stringify(body)).to.equal(400);
      expect(field(reply.body, 'error', 'code')).to.equal('invalid_request');
    }
    const tooMany = await q({ queries: [{ metrics: ['x'] }], interval: 0.001 });
    expect(field(tooMany.body, 'error', 'message')).to.contain('at most 11000');
    expect((await q({ queries: [{ metrics: ['x'] }], interval: 0.017 })).status).to.equal(200); // 10,589 points: under the limit
  });

  it('skips Prometheus staleness markers (remote write) rather than turning a bucket into NaN', async () => {
    // A remote-written gauge: 4 then 6 in bucket 0, where a staleness marker (a NaN with its own bits) also lands; 8 in bucket 1.
    await insertRows(
      h.store,
      'metrics',
      [gauge(5, 4, web), gauge(10, 6, web), gauge(70, 8, web)].map((g) => metricRow({ ...g, name: 'stale.gauge' })),
    );
    await h.store.client.command({
      query: `INSERT INTO ${h.store.database}.metrics (tenant_id, metric_name, metric_type, timestamp, value)
        SELECT 'acme', 'stale.gauge', 'gauge', fromUnixTimestamp64Nano(toInt64({ns:String})), reinterpretAsFloat64(toUInt64({bits:String}))`,
      query_params: { ns: at(30).toString(), bits: staleMarkerBits.toString() },
    });
    const m = { metrics: ['stale.gauge'] };
    expect(await values({ queries: [{ ...m, operator: 'avg' }] })).to.deep.equal([[5, 8, null]]);
    expect(await values({ queries: [{ ...m, operator: 'count' }] })).to.deep.equal([[2, 1, 0]]);
    expect(await values({ queries: [{ ...m, operator: 'last' }] })).to.deep.equal([[6, 8, null]]);
  });

  it('keeps other tenants out', async () => {
    const reply = await q({ queries: [{ metrics: ['latency.gauge'], operator: 'max' }] }, keys.readAcme);
    expect(reply.text).not.to.contain('1000000000');
    expect((await h.post('/v1/tenants/globex/timeseries', { startTime: T0, queries: { metrics: ['latency.gauge'] } }, keys.readAcme)).status).to.equal(404);
  });
});
