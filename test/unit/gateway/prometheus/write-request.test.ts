import { expect } from 'chai';
import fc from 'fast-check';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { defaultItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import { TenantResolver } from '../../../../gateway/convert/common/tenant-resolver.ts';
import { maxDenseBuckets } from '../../../../gateway/prometheus/native-histogram.ts';
import { remoteWriteScope } from '../../../../src/prometheus/remote-write-scope.ts';
import { msToNanos, remoteWriteConverter } from '../../../../gateway/prometheus/write-request.ts';
import type { RemoteWriteBatch } from '../../../../gateway/prometheus/write-request.ts';
import { encodeWriteRequest, metadataType, staleNaNBits, withStaleMarkers } from '../../../../support/remote-write-request.ts';
import type { HistogramSpec, SeriesSpec } from '../../../../support/remote-write-request.ts';
import { readRows } from '../support/row-binary-reader.ts';
import type { Row } from '../support/row-binary-reader.ts';

const nowMs = Date.UTC(2026, 10, 24, 3, 0, 0);
const t = nowMs - 60_000;
const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['t1']) };
const convert = remoteWriteConverter(defaultItemLimits, () => nowMs);

function converted(body: Buffer, admits = true): RemoteWriteBatch {
  const result = convert(body, 't1', new TenantResolver(principal, { admits: () => admits }));
  if (!result.ok) throw new Error(result.error);
  return result.value;
}
const rowsOf = (series: readonly SeriesSpec[]): Row[] => readRows('metrics', converted(encodeWriteRequest(series)).batch.rows);
const failure = (body: Buffer): string => {
  const result = convert(body, 't1', new TenantResolver(principal));
  if (result.ok) throw new Error('converted');
  return result.error;
};

/** A sample row with every column not set by the sample at its value. */
const sampleRow: Row = {
  tenant_id: 't1',
  metric_name: 'http_requests_total',
  metric_type: 'gauge',
  description: '',
  unit: '',
  temporality: 'unspecified',
  is_monotonic: false,
  service_name: 'api',
  resource_schema_url: '',
  resource_attributes: [
    ['service.name', 'api'],
    ['service.instance.id', '10.0.0.1:9090'],
  ],
  scope_name: 'tenantry.prometheus.remote_write',
  scope_version: '1.0',
  scope_attributes: [],
  attributes: [
    ['code', '200'],
    ['method', 'GET'],
  ],
  start_timestamp: 0n,
  timestamp: BigInt(t) * 1_000_000n,
  flags: 0,
  value: 42,
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
const labels = { __name__: 'http_requests_total', code: '200', instance: '10.0.0.1:9090', job: 'api', method: 'GET' };

describe('remote write: WriteRequest to metrics rows', () => {
  it('writes one gauge row per sample: name as sent, job and instance as the resource, other labels as attributes, ms as ns', () => {
    const rows = rowsOf([
      {
        labels,
        samples: [
          { value: 42, timestampMs: t },
          { value: 43, timestampMs: t + 15_000 },
        ],
      },
    ]);
    expect(rows).to.deep.equal([sampleRow, { ...sampleRow, value: 43, timestamp: BigInt(t + 15_000) * 1_000_000n }]);
    expect(remoteWriteScope.name).to.equal(sampleRow['scope_name']);
  });

  it('keeps classic histogram series and quantiles as the separate series Prometheus sends, without job or instance when absent', () => {
    const rows = rowsOf([
      { labels: { __name__: 'rpc_seconds_bucket', le: '0.5' }, samples: [{ value: 3, timestampMs: t }] },
      { labels: { __name__: 'rpc_seconds_sum' }, samples: [{ value: 1.25, timestampMs: t }] },
      { labels: { __name__: 'rpc_seconds_count' }, samples: [{ value: 4, timestampMs: t }] },
    ]);
    expect(rows.map((r) => [r['metric_name'], r['attributes'], r['value'], r['service_name'], r['resource_attributes']])).to.deep.equal([
      ['rpc_seconds_bucket', [['le', '0.5']], 3, '', []],
      ['rpc_seconds_sum', [], 1.25, '', []],
      ['rpc_seconds_count', [], 4, '', []],
    ]);
  });

  it('copies a staleness marker bit-exactly', () => {
    const sentinel = 987654.321;
    const body = withStaleMarkers(encodeWriteRequest([{ labels, samples: [{ value: sentinel, timestampMs: t }] }]), sentinel);
    const { rows } = converted(body).batch;
    const marker = Buffer.alloc(8);
    marker.writeBigUInt64LE(staleNaNBits);
    expect(rows.indexOf(marker)).to.be.greaterThan(0);
    expect(Number.isNaN(readRows('metrics', rows)[0]?.['value'])).to.equal(true);
  });

  it('drops exemplars and series without points; returns metadata with Prometheus type names', () => {
    const batch = converted(
      encodeWriteRequest(
        [
          { labels, samples: [{ value: 1, timestampMs: t }], exemplars: [{ labels: { trace_id: 'abc' }, value: 0.3, timestampMs: t }] },
          { labels: { __name__: 'only_exemplars' }, exemplars: [{ labels: {}, value: 1, timestampMs: t }] },
        ],
        [
          { type: metadataType.counter, family: 'http_requests', help: 'Requests.', unit: '' },
          { type: metadataType.gaugehistogram, family: 'x', help: '', unit: 'seconds' },
        ],
      ),
    );
    expect(batch.batch.rowCount).to.equal(1);
    expect(batch.metadata).to.deep.equal([
      { metricFamily: 'http_requests', type: 'counter', help: 'Requests.', unit: '' },
      { metricFamily: 'x', type: 'gaugehistogram', help: '', unit: 'seconds' },
    ]);
  });

  it('flattens an integer native histogram: spans and deltas to an offset one lower and dense counts, gaps as zeros', () => {
    const h: HistogramSpec = {
      countInt: 9,
      sum: 12.5,
      schema: 3,
      zeroThreshold: 1e-128,
      zeroCountInt: 2,
      timestampMs: t,
      positiveSpans: [
        { offset: -2, length: 2 },
        { offset: 3, length: 1 },
      ],
      positiveDeltas: [1, 1, -1],
      negativeSpans: [{ offset: 0, length: 1 }],
      negativeDeltas: [3],
    };
    const [row] = rowsOf([{ labels: { __name__: 'latency_seconds', job: 'api' }, histograms: [h] }]);
    expect(row).to.include({
      metric_name: 'latency_seconds',
      metric_type: 'exponential_histogram',
      temporality: 'cumulative',
      value: 0,
      count: 9n,
      sum: 12.5,
      min: null,
      max: null,
    });
    expect(row).to.include({ exp_scale: 3, exp_zero_count: 2n, exp_zero_threshold: 1e-128, exp_positive_offset: -3, exp_negative_offset: -1 });
    expect(row?.['exp_positive_bucket_counts']).to.deep.equal([1n, 2n, 0n, 0n, 0n, 1n]);
    expect(row?.['exp_negative_bucket_counts']).to.deep.equal([3n]);
    expect(row?.['timestamp']).to.equal(BigInt(t) * 1_000_000n);
  });

  it('flattens a float native histogram (absolute counts, rounded to whole counts) and an empty one', () => {
    const [float, empty] = rowsOf([
      {
        labels: { __name__: 'f' },
        histograms: [
          { countFloat: 5.4, sum: 2, schema: 0, zeroCountFloat: 1.6, timestampMs: t, positiveSpans: [{ offset: 1, length: 2 }], positiveCounts: [1.2, 3.5] },
          { countInt: 0, sum: 0, schema: -4, timestampMs: t + 1 },
        ],
      },
    ]);
    expect(float).to.include({ count: 5n, exp_zero_count: 2n, exp_positive_offset: 0, exp_scale: 0 });
    expect(float?.['exp_positive_bucket_counts']).to.deep.equal([1n, 4n]);
    expect(empty).to.include({ count: 0n, exp_scale: -4, exp_positive_offset: 0, exp_negative_offset: 0 });
  });

  it('skips custom-bucket native histograms and rejects one whose spans would expand past the dense limit', () => {
    const batch = converted(
      encodeWriteRequest([
        {
          labels: { __name__: 'h' },
          histograms: [
            { countInt: 1, sum: 1, schema: -53, timestampMs: t, positiveSpans: [{ offset: 0, length: 1 }], positiveDeltas: [1] },
            {
              countInt: 2,
              sum: 1,
              schema: 0,
              timestampMs: t,
              positiveSpans: [
                { offset: 0, length: 1 },
                { offset: maxDenseBuckets, length: 1 },
              ],
              positiveDeltas: [1, 0],
            },
          ],
        },
      ]),
    );
    expect(batch.skippedHistograms).to.equal(1);
    expect(batch.batch.rowCount).to.equal(0);
    expect([...batch.batch.rejected.byReason]).to.deep.equal([['request_too_expansive', 1]]);
  });

  it('rejects samples outside the time window one by one, and every sample of a tenant over its ingest limit', () => {
    const series = [
      {
        labels,
        samples: [
          { value: 1, timestampMs: t },
          { value: 2, timestampMs: nowMs - 200 * 86_400_000 },
          { value: 3, timestampMs: -5 },
        ],
      },
    ];
    const windowed = converted(encodeWriteRequest(series));
    expect(windowed.batch.rowCount).to.equal(1);
    expect([...windowed.batch.rejected.byReason]).to.deep.equal([['timestamp_too_old', 2]]);
    const limited = converted(encodeWriteRequest(series), false);
    expect(limited.batch.rowCount).to.equal(0);
    expect([...limited.batch.rejected.byReason]).to.deep.equal([['rate_limited', 3]]);
  });

  it('refuses undecodable requests with a reason', () => {
    expect(failure(Buffer.from([0x0a, 0x05, 0x01]))).to.match(/^invalid protobuf: /);
    expect(failure(encodeWriteRequest([{ labels: { job: 'x' }, samples: [{ value: 1, timestampMs: t }] }]))).to.contain('no __name__ label');
    expect(
      failure(
        encodeWriteRequest([
          {
            labels: { __name__: 'h' },
            histograms: [{ countInt: 1, sum: 1, schema: 0, timestampMs: t, positiveSpans: [{ offset: 0, length: 3 }], positiveDeltas: [1] }],
          },
        ]),
      ),
    ).to.contain('spans describe 3 buckets but carry 1 counts');
    expect(
      failure(
        encodeWriteRequest([
          {
            labels: { __name__: 'h' },
            histograms: [
              {
                countInt: 1,
                sum: 1,
                schema: 0,
                timestampMs: t,
                positiveSpans: [
                  { offset: 0, length: 2 },
                  { offset: -1, length: 1 },
                ],
                positiveDeltas: [1, 0, 0],
              },
            ],
          },
        ]),
      ),
    ).to.contain('spans overlap');
  });

  it('converts ms to ns exactly across the representable range', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 9_223_372_036_853n }), (ms) => {
        const [lo, hi] = msToNanos(Number(ms & 0xffffffffn), Number(ms >> 32n));
        expect((BigInt(hi) << 32n) + BigInt(lo)).to.equal(ms * 1_000_000n);
      }),
    );
    expect(msToNanos(0xfffffffb, 0xffffffff)).to.deep.equal([0, 0]);
  });
});

describe('remote write: hostile bytes', () => {
  const valid = encodeWriteRequest(
    [
      {
        labels,
        samples: [
          { value: 1, timestampMs: t },
          { value: 2, timestampMs: t + 1 },
        ],
        exemplars: [{ labels: { a: 'b' }, value: 1, timestampMs: t }],
      },
      {
        labels: { __name__: 'h', job: 'j' },
        histograms: [
          {
            countInt: 3,
            sum: 1,
            schema: 2,
            zeroCountInt: 1,
            timestampMs: t,
            positiveSpans: [{ offset: -1, length: 2 }],
            positiveDeltas: [1, 1],
            negativeSpans: [{ offset: 2, length: 1 }],
            negativeDeltas: [1],
          },
        ],
      },
    ],
    [{ type: metadataType.histogram, family: 'h', help: 'help', unit: 's' }],
  );

  it('converts or refuses any mutation of a valid request, never throws, and writes only rows ClickHouse can read', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.nat(valid.length),
        (edits, cut) => {
          const body = Buffer.from(valid.subarray(0, Math.max(1, cut)));
          for (const [at, byte] of edits) if (at < body.length) body[at] = byte;
          const result = convert(body, 't1', new TenantResolver(principal));
          if (result.ok) expect(readRows('metrics', result.value.batch.rows)).to.have.length(result.value.batch.rowCount);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses arbitrary bytes without throwing', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        const result = convert(Buffer.from(bytes), 't1', new TenantResolver(principal));
        if (result.ok) expect(readRows('metrics', result.value.batch.rows)).to.have.length(result.value.batch.rowCount);
      }),
      { numRuns: 2000 },
    );
  });
});
