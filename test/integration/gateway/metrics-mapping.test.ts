// All five OTLP metric types, with temporality, monotonicity, buckets and
// quantiles, read back from ClickHouse; exemplars are accepted and dropped.
import { expect } from 'chai';
import { ExportMetricsServiceRequest } from '../../../gateway/wire/otlp-messages.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { kv, post, protobufHeaders } from './support/payloads.ts';

describe('gateway: metric mapping', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('metrics');
  });
  after(async () => {
    await gw.close();
  });

  it('stores gauge, sum, histogram, exponential histogram and summary points', async () => {
    // Recent timestamps: rows older than the retention would be dropped by the TTL.
    const now = BigInt(Date.now()) * 1_000_000n;
    const t = (now + 123_456_789n).toString();
    const start = now.toString();
    const point = { startTimeUnixNano: start, timeUnixNano: t, attributes: kv({ route: '/a' }) };
    const exemplars = [{ timeUnixNano: t, asDouble: 1, traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(8, 2) }];
    const request = ExportMetricsServiceRequest.fromObject({
      resourceMetrics: [
        {
          resource: { attributes: kv({ 'tenant.id': 'm', 'service.name': 'metered' }) },
          scopeMetrics: [
            {
              scope: { name: 'meter', version: '9' },
              metrics: [
                { name: 'g', unit: 'Cel', description: 'temp', gauge: { dataPoints: [{ ...point, asDouble: 21.5, exemplars }] } },
                { name: 's', unit: '1', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ ...point, asInt: 7 }] } },
                {
                  name: 'h',
                  unit: 'ms',
                  histogram: {
                    aggregationTemporality: 2,
                    dataPoints: [{ ...point, count: 3, sum: 30, min: 1, max: 20, bucketCounts: [1, 2, 0], explicitBounds: [5, 10], exemplars }],
                  },
                },
                {
                  name: 'e',
                  exponentialHistogram: {
                    aggregationTemporality: 1,
                    dataPoints: [
                      {
                        ...point,
                        count: 6,
                        sum: 12.5,
                        scale: 3,
                        zeroCount: 1,
                        zeroThreshold: 0.001,
                        positive: { offset: -2, bucketCounts: [2, 3] },
                        negative: { offset: 1, bucketCounts: [0] },
                      },
                    ],
                  },
                },
                {
                  name: 'q',
                  summary: {
                    dataPoints: [
                      {
                        ...point,
                        count: 4,
                        sum: 10,
                        quantileValues: [
                          { quantile: 0.5, value: 2 },
                          { quantile: 0.99, value: 9 },
                        ],
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await post(`${gw.httpUrl}/v1/metrics`, Buffer.from(ExportMetricsServiceRequest.encode(request).finish()), protobufHeaders(keys.admin));
    expect(res.status).to.equal(200);
    const rows = await select<Record<string, unknown>>(
      gw.store,
      `
      SELECT metric_name, toString(metric_type) AS type, toString(temporality) AS temporality, is_monotonic, unit, description, value,
             toString(count) AS count, sum, min, max, arrayMap(x -> toString(x), bucket_counts) AS buckets, explicit_bounds,
             exp_scale, toString(exp_zero_count) AS zero, exp_zero_threshold, exp_positive_offset, arrayMap(x -> toString(x), exp_positive_bucket_counts) AS pos,
             exp_negative_offset, arrayMap(x -> toString(x), exp_negative_bucket_counts) AS neg, quantiles, quantile_values,
             toString(toUnixTimestamp64Nano(timestamp)) AS ts, toString(toUnixTimestamp64Nano(start_timestamp)) AS st, attributes, scope_name, service_name
      FROM ${gw.store.database}.metrics WHERE tenant_id = 'm' ORDER BY metric_name`,
    );
    const by = Object.fromEntries(rows.map((r) => [String(r['metric_name']), r]));
    expect(by['g']).to.include({
      type: 'gauge',
      value: 21.5,
      unit: 'Cel',
      description: 'temp',
      ts: t,
      st: start,
      scope_name: 'meter',
      service_name: 'metered',
    });
    expect(by['g']?.['attributes']).to.deep.equal({ route: '/a' });
    expect(by['s']).to.include({ type: 'sum', temporality: 'delta', is_monotonic: true, value: 7 });
    expect(by['h']).to.include({ type: 'histogram', temporality: 'cumulative', count: '3', sum: 30, min: 1, max: 20 });
    expect(by['h']?.['buckets']).to.deep.equal(['1', '2', '0']);
    expect(by['h']?.['explicit_bounds']).to.deep.equal([5, 10]);
    expect(by['e']).to.include({
      type: 'exponential_histogram',
      temporality: 'delta',
      count: '6',
      sum: 12.5,
      exp_scale: 3,
      zero: '1',
      exp_zero_threshold: 0.001,
      exp_positive_offset: -2,
      exp_negative_offset: 1,
    });
    expect(by['e']?.['pos']).to.deep.equal(['2', '3']);
    expect(by['e']?.['min']).to.equal(null);
    expect(by['q']).to.include({ type: 'summary', count: '4', sum: 10 });
    expect(by['q']?.['quantiles']).to.deep.equal([0.5, 0.99]);
    expect(by['q']?.['quantile_values']).to.deep.equal([2, 9]);
  });

  it('stores NaN and infinities instead of failing the batch', async () => {
    const t = (BigInt(Date.now()) * 1_000_000n).toString();
    const request = ExportMetricsServiceRequest.fromObject({
      resourceMetrics: [
        {
          resource: { attributes: kv({ 'tenant.id': 'nan' }) },
          scopeMetrics: [
            {
              metrics: [
                {
                  name: 'g',
                  gauge: {
                    dataPoints: [
                      { timeUnixNano: t, asDouble: Number.NaN },
                      { timeUnixNano: t, asDouble: Infinity },
                      { timeUnixNano: t, asDouble: -Infinity },
                    ],
                  },
                },
                {
                  name: 'h',
                  histogram: { dataPoints: [{ timeUnixNano: t, count: 1, sum: Number.NaN, min: -Infinity, bucketCounts: [1], explicitBounds: [5] }] },
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await post(`${gw.httpUrl}/v1/metrics`, Buffer.from(ExportMetricsServiceRequest.encode(request).finish()), protobufHeaders(keys.admin));
    expect(res.status).to.equal(200);
    const rows = await select<{ metric_name: string; v: string; s: string; mn: string | null }>(
      gw.store,
      `SELECT metric_name, toString(value) AS v, toString(sum) AS s, toString(min) AS mn FROM ${gw.store.database}.metrics WHERE tenant_id = 'nan' ORDER BY metric_name, v`,
    );
    expect(rows).to.deep.equal([
      { metric_name: 'g', v: '-inf', s: '0', mn: null },
      { metric_name: 'g', v: 'inf', s: '0', mn: null },
      { metric_name: 'g', v: 'nan', s: '0', mn: null },
      { metric_name: 'h', v: '0', s: 'nan', mn: '-inf' },
    ]);
  });

  it('exposes its Prometheus metrics on the OTLP/HTTP port', async () => {
    const text = await (await fetch(`${gw.httpUrl}/metrics`)).text();
    expect(text).to.match(/tenantry_gateway_accepted_items_total\{signal="metrics"\} 9/);
    expect(text).to.include('tenantry_gateway_batch_rows_bucket');
    expect(text).to.include('tenantry_gateway_wal_bytes');
    expect(text).to.match(/tenantry_gateway_requests_total\{protocol="http",signal="metrics",status="200"\} 2/);
    expect((await fetch(`${gw.httpUrl}/healthz`)).status).to.equal(200);
    expect((await fetch(`${gw.httpUrl}/readyz`)).status).to.equal(200);
  });
});
