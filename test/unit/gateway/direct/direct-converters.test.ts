// The direct protobuf converters must write exactly what the message-based
// converters write for the same request: random OTLP requests (every
// AnyValue type, nested values, odd enums and timestamps, events, links,
// tenant rules) go through both, and the parsed rows must be equal.
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import fc from 'fast-check';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { logRowsDirect } from '../../../../gateway/direct/log-rows-direct.ts';
import { spanRowsDirect } from '../../../../gateway/direct/span-rows-direct.ts';
import { LogIdGenerator } from '../../../../gateway/ingest/log-id.ts';
import { logRows } from '../../../../gateway/ingest/log-rows.ts';
import { spanRows } from '../../../../gateway/ingest/span-rows.ts';
import { TenantResolver } from '../../../../gateway/ingest/tenant-resolver.ts';
import { ExportLogsServiceRequest, ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';

const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['t1', 't2', '42', "a.b~c*(d)'!-_"]) };

const scalar = fc.oneof(
  fc.record({ stringValue: fc.string({ unit: 'binary', maxLength: 20 }) }),
  fc.record({ boolValue: fc.boolean() }),
  fc.record({ intValue: fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map(String) }),
  fc.record({ doubleValue: fc.double() }),
  fc.record({ bytesValue: fc.uint8Array({ maxLength: 8 }) }),
  fc.constant({}),
);
const anyValue = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.record({ arrayValue: fc.record({ values: fc.array(scalar, { maxLength: 3 }) }) }) },
  { weight: 1, arbitrary: fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string({ maxLength: 5 }), value: scalar }), { maxLength: 3 }) }) }) },
);
const tenantValue = fc.oneof(
  fc.constantFrom('t1', 't2', 'other', '', '.', "a.b~c*(d)'!-_").map((s) => ({ stringValue: s })),
  fc.constantFrom('42', '-1').map((s) => ({ intValue: s })),
  fc.constant({ boolValue: true }),
  fc.constant({}),
);
const keyValue = fc.oneof(
  { weight: 5, arbitrary: fc.record({ key: fc.string({ unit: 'binary', maxLength: 12 }), value: anyValue }, { requiredKeys: ['key'] }) },
  { weight: 1, arbitrary: fc.record({ key: fc.constantFrom('tenant.id', 'service.name', 'log.record.uid'), value: tenantValue }, { requiredKeys: ['key'] }) },
);
const attributes = fc.array(keyValue, { maxLength: 5 });
const nanos = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_800_000_000_000_000_000n })).map(String);
const bytes = fc.uint8Array({ maxLength: 16 });
const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const uint32 = fc.integer({ min: 0, max: 4294967295 });
const resource = fc.record({ attributes }, { requiredKeys: [] });
const scope = fc.record({ name: fc.string({ maxLength: 8 }), version: fc.string({ maxLength: 5 }), attributes }, { requiredKeys: [] });

const span = fc.record({
  traceId: bytes, spanId: bytes, parentSpanId: bytes, traceState: fc.string({ maxLength: 10 }), flags: uint32, name: fc.string({ unit: 'binary', maxLength: 15 }),
  kind: int32, startTimeUnixNano: nanos, endTimeUnixNano: nanos, attributes, droppedAttributesCount: uint32, droppedEventsCount: uint32, droppedLinksCount: uint32,
  events: fc.array(fc.record({ timeUnixNano: nanos, name: fc.string({ maxLength: 6 }), attributes }, { requiredKeys: [] }), { maxLength: 3 }),
  links: fc.array(fc.record({ traceId: bytes, spanId: bytes, traceState: fc.string({ maxLength: 6 }), attributes, flags: uint32 }, { requiredKeys: [] }), { maxLength: 3 }),
  status: fc.record({ message: fc.string({ maxLength: 10 }), code: int32 }, { requiredKeys: [] }),
}, { requiredKeys: [] });
const tracesRequest = fc.record({
  resourceSpans: fc.array(fc.record({ resource, schemaUrl: fc.string({ maxLength: 8 }), scopeSpans: fc.array(fc.record({ scope, spans: fc.array(span, { maxLength: 4 }) }, { requiredKeys: [] }), { maxLength: 3 }) }, { requiredKeys: [] }), { maxLength: 3 }),
});

const logRecord = fc.record({
  timeUnixNano: fc.oneof(nanos, fc.constant('0')), observedTimeUnixNano: nanos, severityNumber: int32, severityText: fc.constantFrom('', 'INFO', 'warn', 'Error', 'bogus', 'FATAL'),
  body: anyValue, attributes, droppedAttributesCount: uint32, flags: uint32, traceId: bytes, spanId: bytes, eventName: fc.string({ maxLength: 8 }),
}, { requiredKeys: [] });
const logsRequest = fc.record({
  resourceLogs: fc.array(fc.record({ resource, schemaUrl: fc.string({ maxLength: 8 }), scopeLogs: fc.array(fc.record({ scope, schemaUrl: fc.string({ maxLength: 5 }), logRecords: fc.array(logRecord, { maxLength: 4 }) }, { requiredKeys: [] }), { maxLength: 3 }) }, { requiredKeys: [] }), { maxLength: 3 }),
});

const parseRows = (rows: string | Buffer): unknown[] => rows.toString().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);

describe('direct protobuf converters', () => {
  it('write the same span rows and rejections as the message converter', () => {
    fc.assert(fc.property(tracesRequest, (request) => {
      const body = Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish());
      const viaMessages = spanRows(ExportTraceServiceRequest.decode(body).resourceSpans, new TenantResolver(principal));
      const direct = spanRowsDirect(body, new TenantResolver(principal));
      expect(direct.rowCount).to.equal(viaMessages.rowCount);
      expect(direct.rejected.message('spans')).to.equal(viaMessages.rejected.message('spans'));
      expect(isDeepStrictEqual(parseRows(direct.rows), parseRows(viaMessages.rows)), `${direct.rows.toString()}\n---\n${viaMessages.rows.toString()}`).to.equal(true);
    }), { numRuns: 300 });
  });

  it('write the same log rows and rejections as the message converter', () => {
    fc.assert(fc.property(logsRequest, (request) => {
      const body = Buffer.from(ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(request)).finish());
      const viaMessages = logRows(ExportLogsServiceRequest.decode(body).resourceLogs, new TenantResolver(principal), new LogIdGenerator('0000000000'), 1_700_000_000_000);
      const direct = logRowsDirect(body, new TenantResolver(principal), new LogIdGenerator('0000000000'), 1_700_000_000_000);
      expect(direct.rowCount).to.equal(viaMessages.rowCount);
      expect(direct.rejected.message('log records')).to.equal(viaMessages.rejected.message('log records'));
      expect(isDeepStrictEqual(parseRows(direct.rows), parseRows(viaMessages.rows)), `${direct.rows.toString()}\n---\n${viaMessages.rows.toString()}`).to.equal(true);
    }), { numRuns: 300 });
  });
});
