// The direct protobuf converters must write exactly what the message-based
// converters write for the same request: random OTLP requests (every
// AnyValue type, nested values, odd enums and timestamps, events, links,
// tenant rules) go through both, and the RowBinary bytes must be equal.
import { expect } from 'chai';
import fc from 'fast-check';
import { logRowsDirect } from '../../../../gateway/direct/log-rows-direct.ts';
import { spanRowsDirect } from '../../../../gateway/direct/span-rows-direct.ts';
import { LogIdGenerator } from '../../../../gateway/ingest/log-id.ts';
import { logRows } from '../../../../gateway/ingest/log-rows.ts';
import { spanRows } from '../../../../gateway/ingest/span-rows.ts';
import { TenantResolver } from '../../../../gateway/ingest/tenant-resolver.ts';
import { ExportLogsServiceRequest, ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';
import { logsRequest, principal, tracesRequest } from '../support/otlp-arbitraries.ts';
import { rowDifference } from '../support/row-binary-reader.ts';

describe('direct protobuf converters', () => {
  it('write the same span rows and rejections as the message converter', () => {
    fc.assert(fc.property(tracesRequest, (request) => {
      const body = Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish());
      const viaMessages = spanRows(ExportTraceServiceRequest.decode(body).resourceSpans, new TenantResolver(principal));
      const direct = spanRowsDirect(body, new TenantResolver(principal));
      expect(direct.rowCount).to.equal(viaMessages.rowCount);
      expect(direct.rejected.message('spans')).to.equal(viaMessages.rejected.message('spans'));
      expect(direct.rows.equals(viaMessages.rows), rowDifference('spans', viaMessages.rows, direct.rows)).to.equal(true);
    }), { numRuns: 300 });
  });

  it('write the same log rows and rejections as the message converter', () => {
    fc.assert(fc.property(logsRequest, (request) => {
      const body = Buffer.from(ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(request)).finish());
      const viaMessages = logRows(ExportLogsServiceRequest.decode(body).resourceLogs, new TenantResolver(principal), new LogIdGenerator('0000000000'), 1_700_000_000_000);
      const direct = logRowsDirect(body, new TenantResolver(principal), new LogIdGenerator('0000000000'), 1_700_000_000_000);
      expect(direct.rowCount).to.equal(viaMessages.rowCount);
      expect(direct.rejected.message('log records')).to.equal(viaMessages.rejected.message('log records'));
      expect(direct.rows.equals(viaMessages.rows), rowDifference('logs', viaMessages.rows, direct.rows)).to.equal(true);
    }), { numRuns: 300 });
  });
});
