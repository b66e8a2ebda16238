// The OTLP/JSON converters write well-formed RowBinary for any request: every
// row decodes with the table's column types, nothing is left over, and every
// item is either a row or a rejection.
import { expect } from 'chai';
import fc from 'fast-check';
import { LogIdGenerator } from '../../../../gateway/convert/logs/log-id.ts';
import { logsFromJson } from '../../../../gateway/convert/logs/json.ts';
import { metricsFromJson } from '../../../../gateway/convert/metrics/json.ts';
import { tracesFromJson } from '../../../../gateway/convert/traces/json.ts';
import type { RowConverter } from '../../../../gateway/convert/common/row-converter.ts';
import { TenantResolver } from '../../../../gateway/convert/common/tenant-resolver.ts';
import type { RowBatch } from '../../../../gateway/rowbinary/row-batch.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';
import { anyTime, testNow } from './json-body.ts';
import { logsRequest, metricsRequest, otlpJson, principal, tracesRequest } from '../support/otlp-arbitraries.ts';
import { readRows } from '../support/row-binary-reader.ts';

/** The rows of a random request, converted from OTLP/JSON. */
function jsonRows(converter: RowConverter, request: object): RowBatch {
  const result = converter.convert(Buffer.from(otlpJson(request)), new TenantResolver(principal));
  if (!result.ok) expect.fail(result.error);
  return result.value;
}

describe('OTLP/JSON converters on random requests', () => {
  it('write decodable span rows, one per accepted span', () => {
    fc.assert(
      fc.property(tracesRequest, (request) => {
        const { resourceSpans } = ExportTraceServiceRequest.fromObject(request);
        const batch = jsonRows(tracesFromJson(anyTime, testNow), request);
        const spans = resourceSpans.flatMap((rs) => (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? []));
        expect(readRows('spans', batch.rows)).to.have.length(batch.rowCount);
        expect(batch.rowCount + batch.rejected.count).to.equal(spans.length);
      }),
      { numRuns: 200 },
    );
  });

  it('write decodable log rows, one per accepted record', () => {
    fc.assert(
      fc.property(logsRequest, (request) => {
        const { resourceLogs } = ExportLogsServiceRequest.fromObject(request);
        const batch = jsonRows(logsFromJson(new LogIdGenerator('0000000000'), testNow, anyTime), request);
        const records = resourceLogs.flatMap((rl) => (rl.scopeLogs ?? []).flatMap((sl) => sl.logRecords ?? []));
        const rows = readRows('logs', batch.rows);
        expect(rows).to.have.length(batch.rowCount);
        expect(batch.rowCount + batch.rejected.count).to.equal(records.length);
        for (const row of rows) expect(typeof row['timestamp'] === 'bigint' && row['timestamp'] >= 0n, String(row['timestamp'])).to.equal(true);
      }),
      { numRuns: 200 },
    );
  });

  it('write decodable metric rows, one per accepted point of every type', () => {
    fc.assert(
      fc.property(metricsRequest, (request) => {
        const { resourceMetrics } = ExportMetricsServiceRequest.fromObject(request);
        const batch = jsonRows(metricsFromJson(anyTime, testNow), request);
        const points = resourceMetrics.flatMap((rm) =>
          (rm.scopeMetrics ?? []).flatMap((sm) =>
            (sm.metrics ?? []).flatMap((m) => {
              const data = m.gauge ?? m.sum ?? m.histogram ?? m.exponentialHistogram ?? m.summary;
              return data?.dataPoints ?? [];
            }),
          ),
        );
        expect(readRows('metrics', batch.rows)).to.have.length(batch.rowCount);
        expect(batch.rowCount + batch.rejected.count).to.equal(points.length);
      }),
      { numRuns: 200 },
    );
  });
});
