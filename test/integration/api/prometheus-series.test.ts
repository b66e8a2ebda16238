// The Prometheus API's series browser, metadata and build information over
// OTLP rows (named by the OpenTelemetry → Prometheus compatibility rules)
// and remote-written rows; tenant isolation on every endpoint; the tenant's
// maxQueryDays.
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { insertRows, metricRow, secondsNs } from './support/telemetry-rows.ts';

const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3600;
const at = (s: number): bigint => secondsNs(T0 + s);
const shop = { 'service.name': 'shop', 'service.namespace': 'prod', 'service.instance.id': 'i-1' };
const endpoints = [
  '/api/v1/query',
  '/api/v1/query_range',
  '/api/v1/labels',
  '/api/v1/label/job/values',
  '/api/v1/series',
  '/api/v1/metadata',
  '/api/v1/status/buildinfo',
];

describe('api/prometheus series', () => {
  let h: Harness;
  const get = (
    path: string,
    params: Record<string, string | number | readonly string[]> = {},
    key: string = keys.readAcme,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? (v as readonly string[]) : [String(v)]) search.append(k, one);
    return h.call('GET', `/prometheus${path}?${search.toString()}`, { key, headers });
  };
  const data = async (path: string, params: Record<string, string | number | readonly string[]> = {}, key?: string): Promise<unknown> => {
    const reply = await get(path, { start: T0 - 60, end: T0 + 120, ...params }, key);
    expect(reply.status, reply.text).to.equal(200);
    return field(reply.body, 'data');
  };

  before(async () => {
    h = await startHarness('prometheus_series', [{ key: 'read-initech-key-0123456789', scopes: ['read'], tenants: ['initech'] }]);
    const base = { tenant: 'acme', resource: shop, temporality: 'cumulative' };
    await insertRows(h.store, 'metrics', [
      metricRow({
        ...base,
        name: 'http.server.requests',
        type: 'sum',
        monotonic: true,
        unit: '{request}',
        description: 'Requests served',
        ns: at(0),
        value: 7,
        attrs: { 'http.method': 'GET', '1st': 'x' },
      }),
      metricRow({
        ...base,
        name: 'http.server.duration',
        type: 'histogram',
        unit: 's',
        ns: at(0),
        count: 40,
        sum: 12,
        bounds: [0.1, 0.5, 1],
        buckets: [10, 20, 10, 0],
      }),
      metricRow({ ...base, name: 'bare.histogram', type: 'histogram', ns: at(0), count: 5, sum: 9 }),
      metricRow({ ...base, name: 'cpu.utilization', type: 'gauge', unit: '1', temporality: 'unspecified', ns: at(0), value: 0.25 }),
      metricRow({
        ...base,
        name: 'rpc.latency',
        type: 'summary',
        unit: 'ms',
        temporality: 'unspecified',
        ns: at(0),
        count: 3,
        sum: 30,
        quantiles: [0.5, 0.9],
        quantileValues: [8, 15],
      }),
      metricRow({ ...base, name: 'delta.thing', type: 'sum', monotonic: true, temporality: 'delta', ns: at(0), value: 1 }),
      metricRow({ tenant: 'globex', name: 'room.temp', type: 'gauge', ns: at(0), value: 99, resource: { 'service.name': 'vault' }, attrs: { room: 'secret' } }),
      {
        ...metricRow({
          tenant: 'acme',
          name: 'up',
          type: 'gauge',
          ns: at(0),
          value: 1,
          resource: { 'service.name': 'node', 'service.instance.id': 'h:9100' },
          attrs: { room: 'lobby' },
        }),
        scope_name: 'tenantry.prometheus.remote_write',
      },
    ]);
  });
  after(async () => {
    await h.close();
  });

  it('names OTLP metrics by the compatibility rules and lists them with remote-written ones', async () => {
    expect(await data('/api/v1/label/__name__/values')).to.deep.equal([
      'bare_histogram_bucket',
      'bare_histogram_count',
      'bare_histogram_sum',
      'cpu_utilization_ratio',
      'http_server_duration_seconds_bucket',
      'http_server_duration_seconds_count',
      'http_server_duration_seconds_sum',
      'http_server_requests_total',
      'rpc_latency_milliseconds',
      'rpc_latency_milliseconds_count',
      'rpc_latency_milliseconds_sum',
      'up',
    ]);
    expect(await data('/api/v1/labels')).to.deep.equal(['__name__', 'http_method', 'instance', 'job', 'key_1st', 'le', 'quantile', 'room']);
    expect(await data('/api/v1/series', { 'match[]': 'http_server_requests_total' })).to.deep.equal([
      { __name__: 'http_server_requests_total', http_method: 'GET', instance: 'i-1', job: 'prod/shop', key_1st: 'x' },
    ]);
    const buckets = (await data('/api/v1/series', { 'match[]': ['http_server_duration_seconds_bucket', 'up'] })) as Record<string, string>[];
    expect(buckets.map((s) => s['le'] ?? s['__name__'])).to.have.members(['0.1', '0.5', '1', '+Inf', 'up']);
    expect(await data('/api/v1/label/le/values', { 'match[]': 'http_server_duration_seconds_bucket{le!="+Inf"}' })).to.deep.equal(['0.1', '0.5', '1']);
  });

  it('queries OTLP histograms and summaries as their Prometheus series', async () => {
    const q = async (query: string): Promise<unknown> => field(await data('/api/v1/query', { query, time: T0 + 10 }), 'result');
    // Cumulative 10, 30, 40, 40: rank 20 in (0.1, 0.5] → 0.1 + 0.4 × 10/20.
    const p50 = (await q('histogram_quantile(0.5, http_server_duration_seconds_bucket)')) as { metric: unknown; value: [number, string] }[];
    expect(p50.map((s) => s.metric)).to.deep.equal([{ instance: 'i-1', job: 'prod/shop' }]);
    expect(Number(p50[0]?.value[1])).to.be.closeTo(0.3, 1e-12);
    expect(await q('http_server_duration_seconds_count + http_server_duration_seconds_sum')).to.deep.equal([
      { metric: { instance: 'i-1', job: 'prod/shop' }, value: [T0 + 10, '52'] },
    ]);
    expect(await q('rpc_latency_milliseconds{quantile="0.9"}')).to.deep.equal([
      { metric: { __name__: 'rpc_latency_milliseconds', instance: 'i-1', job: 'prod/shop', quantile: '0.9' }, value: [T0 + 10, '15'] },
    ]);
    expect(await q('{__name__=~"cpu_.*|up"}')).to.have.length(2);
    // A histogram without bounds: its one +Inf bucket holds the count.
    expect(await q('bare_histogram_bucket')).to.deep.equal([
      { metric: { __name__: 'bare_histogram_bucket', instance: 'i-1', job: 'prod/shop', le: '+Inf' }, value: [T0 + 10, '5'] },
    ]);
    expect(await q('{__name__=~"delta.*"}')).to.deep.equal([]);
  });

  it('serves metadata and build information', async () => {
    const meta = (await data('/api/v1/metadata')) as Record<string, unknown>;
    expect(meta['http_server_requests_total']).to.deep.equal([{ type: 'counter', help: 'Requests served', unit: '{request}' }]);
    expect(meta['http_server_duration_seconds']).to.deep.equal([{ type: 'histogram', help: '', unit: 's' }]);
    expect(await data('/api/v1/metadata', { metric: 'cpu_utilization_ratio' })).to.deep.equal({
      cpu_utilization_ratio: [{ type: 'gauge', help: '', unit: '1' }],
    });
    expect(field(await data('/api/v1/status/buildinfo'), 'version')).to.equal('3.16.0');
  });

  it("answers 404 in Prometheus' envelope for a tenant outside the key, on every endpoint", async () => {
    for (const path of endpoints) {
      const reply = await get(path, { query: 'up', 'match[]': 'up', start: T0, end: T0 + 60, step: 15 }, keys.readAcme, { 'x-scope-orgid': 'globex' });
      expect(reply.status, path).to.equal(404);
      expect(reply.body, path).to.include({ status: 'error', errorType: 'not_found' });
      expect(reply.text, path).to.not.include('secret');
    }
    const multi = await get('/api/v1/labels', {}, keys.admin);
    expect(multi.status).to.equal(400);
    expect(field(multi.body, 'error')).to.match(/X-Scope-OrgID/i);
  });

  it("never lists another tenant's labels or values", async () => {
    const acme = await get('/api/v1/label/room/values', { start: T0 - 60, end: T0 + 60 }, keys.admin, { 'x-scope-orgid': 'acme' });
    expect(field(acme.body, 'data')).to.deep.equal(['lobby']);
    const globex = await get('/api/v1/label/room/values', { start: T0 - 60, end: T0 + 60 }, keys.readGlobex);
    expect(field(globex.body, 'data')).to.deep.equal(['secret']);
    const query = await get('/api/v1/query', { query: '{room=~".+"}', time: T0 + 10 });
    expect(query.text).to.not.include('secret');
  });

  it("refuses a time range longer than the tenant's limits.maxQueryDays with 400 bad_data", async () => {
    const put = await h.call('PUT', '/v1/tenants/initech', { body: { limits: { maxQueryDays: 1 } } });
    expect(put.status, put.text).to.equal(200);
    const key = 'read-initech-key-0123456789';
    const ok = await get('/api/v1/query_range', { query: 'up', start: T0 - 86_000, end: T0, step: 3600 }, key);
    expect(ok.status, ok.text).to.equal(200);
    for (const [path, params] of [
      ['/api/v1/query_range', { query: 'up', step: 3600 }],
      ['/api/v1/labels', {}],
      ['/api/v1/series', { 'match[]': 'up' }],
    ] as const) {
      const over = await get(path, { start: T0 - 2 * 86_400, end: T0, ...params }, key);
      expect(over.status, path).to.equal(400);
      expect(over.body, path).to.include({ status: 'error', errorType: 'bad_data' });
      expect(field(over.body, 'error'), path).to.include('limits.maxQueryDays (1)');
    }
    // What a query reads counts, not only its start and end: a range selector, a subquery, selectors an offset
    // sets apart (issue 33). The span read is what counts, as everywhere: an offset alone only moves it.
    for (const query of ['sum(rate(up[7d]))', 'max_over_time(up[3d:1h])', 'up - up offset 2d', 'rate(up[1d] offset 1d) + up']) {
      const over = await get('/api/v1/query', { query, time: T0 }, key);
      expect(over.status, query).to.equal(400);
      expect(over.body, query).to.include({ status: 'error', errorType: 'bad_data' });
      expect(field(over.body, 'error'), query).to.include('limits.maxQueryDays (1)');
    }
    const days = field((await get('/api/v1/query', { query: 'sum(rate(up[7d]))', time: T0 }, key)).body, 'error');
    expect(days, 'the message counts the days read').to.include(
      'the time range the query reads (its range selectors, subqueries and offsets included) spans 7 days',
    );
    // A day's range with its 5-minute lookback, and a range selector within a day, stay within the limit.
    expect((await get('/api/v1/query', { query: 'sum(rate(up[1h]))', time: T0 }, key)).status).to.equal(200);
    expect((await get('/api/v1/query', { query: 'up offset 2d', time: T0 }, key)).status).to.equal(200);
    expect((await get('/api/v1/query_range', { query: 'up', start: T0 - 86_400, end: T0, step: 3600 }, key)).status).to.equal(200);
  });

  it('checks series browser parameters', async () => {
    expect(field((await get('/api/v1/series')).body, 'error')).to.equal('no match[] parameter provided');
    expect((await get('/api/v1/series', { 'match[]': 'rate(up[5m])' })).status).to.equal(400);
    expect(field((await get('/api/v1/label/1bad/values')).body, 'error')).to.equal('invalid label name: "1bad"');
    const limited = await get('/api/v1/label/__name__/values', { start: T0 - 60, end: T0 + 60, limit: 2 });
    expect(field(limited.body, 'data')).to.have.length(2);
    expect(field(limited.body, 'warnings')).to.have.length(1);
  });
});
