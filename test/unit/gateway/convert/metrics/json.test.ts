import { expect } from 'chai';
import type { Principal } from '../../../../../src/auth/api-keys.ts';
import { metricsFromJson as metricsConverter } from '../../../../../gateway/convert/metrics/json.ts';
import { anyTime, jsonRows, testNow } from '../json-body.ts';
import { readRows } from '../../support/row-binary-reader.ts';
import type { Row } from '../../support/row-binary-reader.ts';

const metricsFromJson = metricsConverter(anyTime, testNow);

const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['t1']) };
const tenant = [{ key: 'tenant.id', value: { stringValue: 't1' } }];
const point = { attributes: [{ key: 'host', value: { stringValue: 'h1' } }], startTimeUnixNano: '1000', timeUnixNano: '2000', flags: 1 };

/** The row of one metric, converted alone. */
function rowOf(metric: Record<string, unknown>): Row | undefined {
  const request = {
    resourceMetrics: [
      {
        resource: { attributes: [...tenant, { key: 'service.name', value: { stringValue: 'svc' } }] },
        schemaUrl: 'r',
        scopeMetrics: [{ scope: { name: 'meter', version: '1' }, metrics: [{ name: 'm', description: 'd', unit: 's', ...metric }] }],
      },
    ],
  };
  const batch = jsonRows(metricsFromJson, request, principal);
  expect(batch.rowCount).to.equal(1);
  const rows = readRows('metrics', batch.rows);
  expect(rows).to.have.length(1);
  return rows[0];
}

/** A row with every type-specific column at its default. */
const common: Row = {
  tenant_id: 't1',
  metric_name: 'm',
  description: 'd',
  unit: 's',
  temporality: 'unspecified',
  is_monotonic: false,
  service_name: 'svc',
  resource_schema_url: 'r',
  resource_attributes: [
    ['tenant.id', 't1'],
    ['service.name', 'svc'],
  ],
  scope_name: 'meter',
  scope_version: '1',
  scope_attributes: [],
  attributes: [['host', 'h1']],
  start_timestamp: 1000n,
  timestamp: 2000n,
  flags: 1,
  value: 0,
  count: 0n,
  sum: 0,
  min: null,
  max: null,
  bucket_counts: [],
  explicit_bounds: [],
  exp_scale: 0,
  exp_zero_count: 0n,
  exp_zero_threshold: 0,
  exp_positive_offset: 0,
  exp_positive_bucket_counts: [],
  exp_negative_offset: 0,
  exp_negative_bucket_counts: [],
  quantiles: [],
  quantile_values: [],
};

describe('metric-rows', () => {
  it('writes a gauge point, an int value as its double', () => {
    expect(rowOf({ gauge: { dataPoints: [{ ...point, asDouble: 1.25 }] } })).to.deep.equal({ ...common, metric_type: 'gauge', value: 1.25 });
    expect(rowOf({ gauge: { dataPoints: [{ ...point, asInt: '-9007199254740993' }] } })).to.deep.equal({
      ...common,
      metric_type: 'gauge',
      value: -9007199254740992,
    });
    expect(rowOf({ gauge: { dataPoints: [{ ...point, asDouble: Number.NaN }] } })).to.deep.equal({ ...common, metric_type: 'gauge', value: Number.NaN });
  });

  it('writes a sum point with its temporality and monotonicity', () => {
    expect(rowOf({ sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ ...point, asInt: '7' }] } })).to.deep.equal({
      ...common,
      metric_type: 'sum',
      temporality: 'cumulative',
      is_monotonic: true,
      value: 7,
    });
    expect(rowOf({ sum: { aggregationTemporality: 'AGGREGATION_TEMPORALITY_CUMULATIVE', dataPoints: [{ ...point, asDouble: -Infinity }] } })).to.deep.equal({
      ...common,
      metric_type: 'sum',
      temporality: 'cumulative',
      value: -Infinity,
    });
  });

  it('writes a histogram point, min and max NULL when absent', () => {
    expect(
      rowOf({
        histogram: {
          aggregationTemporality: 1,
          dataPoints: [
            { ...point, count: '18446744073709551615', sum: 12.5, min: 0.5, max: 9, bucketCounts: ['1', '9007199254740993'], explicitBounds: [1, 2.5] },
          ],
        },
      }),
    ).to.deep.equal({
      ...common,
      metric_type: 'histogram',
      temporality: 'delta',
      count: 18446744073709551615n,
      sum: 12.5,
      min: 0.5,
      max: 9,
      bucket_counts: [1n, 9007199254740993n],
      explicit_bounds: [1, 2.5],
    });
    expect(rowOf({ histogram: { dataPoints: [{ ...point, count: '3' }] } })).to.deep.equal({ ...common, metric_type: 'histogram', count: 3n });
  });

  it('writes an exponential histogram point', () => {
    expect(
      rowOf({
        exponentialHistogram: {
          aggregationTemporality: 2,
          dataPoints: [
            {
              ...point,
              count: '10',
              sum: 3.5,
              max: 2,
              scale: -3,
              zeroCount: '2',
              zeroThreshold: 1e-9,
              positive: { offset: -2147483648, bucketCounts: ['1', '2'] },
              negative: { offset: 5, bucketCounts: ['4'] },
            },
          ],
        },
      }),
    ).to.deep.equal({
      ...common,
      metric_type: 'exponential_histogram',
      temporality: 'cumulative',
      count: 10n,
      sum: 3.5,
      max: 2,
      exp_scale: -3,
      exp_zero_count: 2n,
      exp_zero_threshold: 1e-9,
      exp_positive_offset: -2147483648,
      exp_positive_bucket_counts: [1n, 2n],
      exp_negative_offset: 5,
      exp_negative_bucket_counts: [4n],
    });
  });

  it('writes a summary point', () => {
    expect(
      rowOf({
        summary: { dataPoints: [{ ...point, count: '4', sum: 10, quantileValues: [{ quantile: 0.5, value: 2 }, { quantile: 0.99, value: Number.NaN }, {}] }] },
      }),
    ).to.deep.equal({ ...common, metric_type: 'summary', count: 4n, sum: 10, quantiles: [0.5, 0.99, 0], quantile_values: [2, Number.NaN, 0] });
  });

  it('skips metrics without data, tallies points without a tenant, and shares the resource across points', () => {
    const request = {
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                { name: 'empty' },
                { name: 'g', gauge: { dataPoints: [{ attributes: tenant, asDouble: 1 }, { asDouble: 2 }, { attributes: tenant, asDouble: 3 }] } },
              ],
            },
          ],
        },
      ],
    };
    const batch = jsonRows(metricsFromJson, request, principal);
    expect(batch.rowCount).to.equal(2);
    expect(batch.rejected.count).to.equal(1);
    expect(readRows('metrics', batch.rows).map((r) => [r['metric_name'], r['value'], r['timestamp']])).to.deep.equal([
      ['g', 1, 0n],
      ['g', 3, 0n],
    ]);
  });
});
