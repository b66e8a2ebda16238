// Stricter decoding of OTLP, the same in OTLP/JSON and protobuf: an enum
// value its definition does not have (span kind 99 or -1, severity number 25,
// aggregation temporality 3) and a histogram bound that is NaN or infinite
// reject their item through partial success, naming the value, while the
// other items are stored; a negative time ("-1") is refused as a time before
// 1970, not read as one after 2262.
import { expect } from 'chai';
import type { Principal } from '../../../../../src/auth/api-keys.ts';
import type { RowConverter } from '../../../../../gateway/convert/common/row-converter.ts';
import { TenantResolver } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import { LogIdGenerator } from '../../../../../gateway/convert/logs/log-id.ts';
import { rowConverters } from '../../../../../gateway/convert/row-converters.ts';
import type { RowBatch } from '../../../../../gateway/rowbinary/row-batch.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../../../../gateway/wire/otlp-messages.ts';
import type { SignalName } from '../../../../../gateway/wire/otlp-messages.ts';
import { anyTime, jsonBody, testNow } from '../json-body.ts';
import { readRows } from '../../support/row-binary-reader.ts';

const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: '*' };
const converters = rowConverters(new LogIdGenerator('0000000000'), testNow, anyTime);
const tenant = { attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }] };
const time = '1700000000000000000';

const encoders: Readonly<Record<SignalName, (request: object) => Uint8Array>> = {
  traces: (r) => ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(r)).finish(),
  logs: (r) => ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(r)).finish(),
  metrics: (r) => ExportMetricsServiceRequest.encode(ExportMetricsServiceRequest.fromObject(r)).finish(),
};

/** The batch of `request` in each wire format: [json, protobuf]. */
function both(signal: SignalName, request: object): RowBatch[] {
  const convert = (converter: RowConverter, body: Buffer): RowBatch => {
    const result = converter.convert(body, new TenantResolver(principal));
    if (!result.ok) expect.fail(result.error);
    return result.value;
  };
  return [convert(converters[signal].json, jsonBody(request)), convert(converters[signal].protobuf, Buffer.from(encoders[signal](request)))];
}

const traces = (kinds: readonly unknown[]): object => ({
  resourceSpans: [
    { resource: tenant, scopeSpans: [{ spans: kinds.map((kind, i) => ({ name: `s${i}`, kind, startTimeUnixNano: time, endTimeUnixNano: time })) }] },
  ],
});

describe('stricter OTLP decoding: enums out of range, bounds not finite, negative times', () => {
  it('rejects a span whose kind is not a SpanKind (99, -1); the others are stored', () => {
    for (const batch of both('traces', traces([2, 99, 5, -1]))) {
      expect(batch.rowCount).to.equal(2);
      expect(batch.rejected.byReason.get('enum_out_of_range')).to.equal(2);
      expect(batch.rejected.message('spans')).to.equal('2 spans rejected: 2 an enum value the OTLP definition does not have, e.g. span kind 99 (0 to 5)');
      expect(readRows('spans', batch.rows).map((r) => r['span_name'])).to.deep.equal(['s0', 's2']);
    }
  });

  it('rejects a log record whose severity number is not a SeverityNumber (25, -3)', () => {
    const request = {
      resourceLogs: [{ resource: tenant, scopeLogs: [{ logRecords: [24, 25, 0, -3].map((severityNumber) => ({ timeUnixNano: time, severityNumber })) }] }],
    };
    for (const batch of both('logs', request)) {
      expect(batch.rowCount).to.equal(2);
      expect(batch.rejected.message('log records')).to.equal(
        '2 log records rejected: 2 an enum value the OTLP definition does not have, e.g. severity number 25 (0 to 24)',
      );
      expect(readRows('logs', batch.rows).map((r) => r['severity_number'])).to.deep.equal([24, 0]);
    }
  });

  it('rejects the points of a metric whose aggregation temporality is not one (3), not those of a gauge', () => {
    const points = {
      dataPoints: [
        { timeUnixNano: time, asDouble: 1 },
        { timeUnixNano: time, asDouble: 2 },
      ],
    };
    const request = {
      resourceMetrics: [
        {
          resource: tenant,
          scopeMetrics: [
            {
              metrics: [
                { name: 'bad', sum: { aggregationTemporality: 3, ...points } },
                { name: 'good', sum: { aggregationTemporality: 1, ...points } },
                { name: 'g', gauge: points },
              ],
            },
          ],
        },
      ],
    };
    for (const batch of both('metrics', request)) {
      expect(batch.rowCount).to.equal(4);
      expect(batch.rejected.message('data points')).to.equal(
        '2 data points rejected: 2 an enum value the OTLP definition does not have, e.g. aggregation temporality 3 (0 to 2)',
      );
      expect(readRows('metrics', batch.rows).map((r) => r['metric_name'])).to.deep.equal(['good', 'good', 'g', 'g']);
    }
  });

  it('rejects a histogram point with a bound that is NaN or infinite', () => {
    const point = (explicitBounds: number[]): object => ({ timeUnixNano: time, count: '2', bucketCounts: ['1', '1', '0'], explicitBounds });
    const request = {
      resourceMetrics: [
        {
          resource: tenant,
          scopeMetrics: [
            {
              metrics: [
                {
                  name: 'h',
                  histogram: {
                    aggregationTemporality: 2,
                    dataPoints: [point([1, 2]), point([1, Number.NaN]), point([Infinity, 2]), point([-Infinity, 0]), point([0.5, 1])],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    for (const batch of both('metrics', request)) {
      expect(batch.rowCount).to.equal(2);
      expect(batch.rejected.message('data points')).to.equal('3 data points rejected: 3 a histogram bound that is NaN or infinite, e.g. explicit bound NaN');
      expect(readRows('metrics', batch.rows).map((r) => r['explicit_bounds'])).to.deep.equal([
        [1, 2],
        [0.5, 1],
      ]);
    }
  });

  it('refuses a negative time in OTLP/JSON as before 1970, not after 2262', () => {
    for (const startTimeUnixNano of ['-1', -1]) {
      const body = jsonBody({ resourceSpans: [{ resource: tenant, scopeSpans: [{ spans: [{ name: 's', startTimeUnixNano }] }] }] });
      const result = converters.traces.json.convert(body, new TenantResolver(principal));
      expect(result.ok).to.equal(false);
      if (!result.ok) {
        expect(result.error).to.equal(
          `invalid OTLP/JSON: ${JSON.stringify(startTimeUnixNano)} is negative where OTLP has an unsigned 64-bit integer: a time before 1970 or a negative count`,
        );
        expect(result.error).not.to.match(/2262/);
      }
    }
  });
});
