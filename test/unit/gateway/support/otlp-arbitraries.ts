// Random OTLP requests (fast-check) as plain objects for the generated
// fromObject: every AnyValue type, nested values, odd enums, 64-bit
// timestamps over the whole range, events, links and tenant.id values that
// exercise every tenant rule (for `principal`).
import fc from 'fast-check';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';
import type { SignalName } from '../../../../gateway/wire/otlp-messages.ts';

/** May write t1, t2, 42 and a tenant id of every allowed punctuation character. */
export const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['t1', 't2', '42', "a.b~c*(d)'!-_"]) };

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
  {
    weight: 1,
    arbitrary: fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string({ maxLength: 5 }), value: scalar }), { maxLength: 3 }) }) }),
  },
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
const nanos = fc
  .oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_800_000_000_000_000_000n }))
  .map(String);
const uint64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String);
const bytes = fc.uint8Array({ maxLength: 16 });
const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const uint32 = fc.integer({ min: 0, max: 4294967295 });
const resource = fc.record({ attributes }, { requiredKeys: [] });
const scope = fc.record({ name: fc.string({ maxLength: 8 }), version: fc.string({ maxLength: 5 }), attributes }, { requiredKeys: [] });

const span = fc.record(
  {
    traceId: bytes,
    spanId: bytes,
    parentSpanId: bytes,
    traceState: fc.string({ maxLength: 10 }),
    flags: uint32,
    name: fc.string({ unit: 'binary', maxLength: 15 }),
    kind: int32,
    startTimeUnixNano: nanos,
    endTimeUnixNano: nanos,
    attributes,
    droppedAttributesCount: uint32,
    droppedEventsCount: uint32,
    droppedLinksCount: uint32,
    events: fc.array(fc.record({ timeUnixNano: nanos, name: fc.string({ maxLength: 6 }), attributes }, { requiredKeys: [] }), { maxLength: 3 }),
    links: fc.array(fc.record({ traceId: bytes, spanId: bytes, traceState: fc.string({ maxLength: 6 }), attributes, flags: uint32 }, { requiredKeys: [] }), {
      maxLength: 3,
    }),
    status: fc.record({ message: fc.string({ maxLength: 10 }), code: int32 }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);

/** An ExportTraceServiceRequest object. */
export const tracesRequest = fc.record({
  resourceSpans: fc.array(
    fc.record(
      {
        resource,
        schemaUrl: fc.string({ maxLength: 8 }),
        scopeSpans: fc.array(fc.record({ scope, spans: fc.array(span, { maxLength: 4 }) }, { requiredKeys: [] }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 3 },
  ),
});

const logRecord = fc.record(
  {
    timeUnixNano: fc.oneof(nanos, fc.constant('0')),
    observedTimeUnixNano: nanos,
    severityNumber: int32,
    severityText: fc.constantFrom('', 'INFO', 'warn', 'Error', 'bogus', 'FATAL'),
    body: anyValue,
    attributes,
    droppedAttributesCount: uint32,
    flags: uint32,
    traceId: bytes,
    spanId: bytes,
    eventName: fc.string({ maxLength: 8 }),
  },
  { requiredKeys: [] },
);

/** An ExportLogsServiceRequest object. */
export const logsRequest = fc.record({
  resourceLogs: fc.array(
    fc.record(
      {
        resource,
        schemaUrl: fc.string({ maxLength: 8 }),
        scopeLogs: fc.array(
          fc.record({ scope, schemaUrl: fc.string({ maxLength: 5 }), logRecords: fc.array(logRecord, { maxLength: 4 }) }, { requiredKeys: [] }),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 3 },
  ),
});

const pointCommon = { attributes, startTimeUnixNano: nanos, timeUnixNano: nanos, flags: uint32 };
const numberPoint = fc
  .record(
    {
      ...pointCommon,
      value: fc.oneof(
        fc.record({ asDouble: fc.double() }),
        fc.record({ asInt: fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map(String) }),
        fc.constant({}),
      ),
    },
    { requiredKeys: [] },
  )
  .map(({ value, ...rest }) => ({ ...rest, ...value }));
const histogramPoint = fc.record(
  {
    ...pointCommon,
    count: uint64,
    sum: fc.double(),
    min: fc.double(),
    max: fc.double(),
    bucketCounts: fc.array(uint64, { maxLength: 4 }),
    explicitBounds: fc.array(fc.double(), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const buckets = fc.record({ offset: int32, bucketCounts: fc.array(uint64, { maxLength: 4 }) }, { requiredKeys: [] });
const exponentialPoint = fc.record(
  {
    ...pointCommon,
    count: uint64,
    sum: fc.double(),
    min: fc.double(),
    max: fc.double(),
    scale: int32,
    zeroCount: uint64,
    zeroThreshold: fc.double(),
    positive: buckets,
    negative: buckets,
  },
  { requiredKeys: [] },
);
const summaryPoint = fc.record(
  {
    ...pointCommon,
    count: uint64,
    sum: fc.double(),
    quantileValues: fc.array(fc.record({ quantile: fc.double(), value: fc.double() }, { requiredKeys: [] }), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const temporality = fc.integer({ min: -1, max: 3 });
const metricData = fc.oneof(
  fc.record({ gauge: fc.record({ dataPoints: fc.array(numberPoint, { maxLength: 3 }) }) }),
  fc.record({ sum: fc.record({ dataPoints: fc.array(numberPoint, { maxLength: 3 }), aggregationTemporality: temporality, isMonotonic: fc.boolean() }) }),
  fc.record({ histogram: fc.record({ dataPoints: fc.array(histogramPoint, { maxLength: 3 }), aggregationTemporality: temporality }) }),
  fc.record({ exponentialHistogram: fc.record({ dataPoints: fc.array(exponentialPoint, { maxLength: 3 }), aggregationTemporality: temporality }) }),
  fc.record({ summary: fc.record({ dataPoints: fc.array(summaryPoint, { maxLength: 3 }) }) }),
  fc.constant({}),
);
const metric = fc
  .tuple(
    fc.record({ name: fc.string({ maxLength: 8 }), description: fc.string({ maxLength: 8 }), unit: fc.string({ maxLength: 3 }) }, { requiredKeys: [] }),
    metricData,
  )
  .map(([fields, data]) => ({ ...fields, ...data }));

// Mostly a resource of tenant t1, so that most points become rows.
const metricsResource = fc.oneof(
  { weight: 3, arbitrary: attributes.map((a) => ({ attributes: [{ key: 'tenant.id', value: { stringValue: 't1' } }, ...a] })) },
  { weight: 1, arbitrary: resource },
);

/** An ExportMetricsServiceRequest object. */
export const metricsRequest = fc.record({
  resourceMetrics: fc.array(
    fc.record(
      {
        resource: metricsResource,
        schemaUrl: fc.string({ maxLength: 8 }),
        scopeMetrics: fc.array(fc.record({ scope, metrics: fc.array(metric, { maxLength: 3 }) }, { requiredKeys: [] }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 2 },
  ),
});

const hexIdFields = new Set(['traceId', 'spanId', 'parentSpanId']);

/**
 * A request object as OTLP/JSON text: trace and span ids in hex, other bytes
 * in base64, and the doubles JSON has no number for (NaN, ±Infinity, -0) as
 * the strings proto3 JSON uses.
 */
export function otlpJson(request: object): string {
  return JSON.stringify(request, (key, value: unknown) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString(hexIdFields.has(key) ? 'hex' : 'base64');
    if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) return Object.is(value, -0) ? '-0' : String(value);
    return value;
  });
}

/** A request object of each signal as protobuf bytes (the generated encoders). */
export const encoders: Readonly<Record<SignalName, (request: object) => Uint8Array>> = {
  traces: (r) => ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(r)).finish(),
  logs: (r) => ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(r)).finish(),
  metrics: (r) => ExportMetricsServiceRequest.encode(ExportMetricsServiceRequest.fromObject(r)).finish(),
};

/** The random requests of each signal. */
export const requests: Readonly<Record<SignalName, fc.Arbitrary<object>>> = { traces: tracesRequest, logs: logsRequest, metrics: metricsRequest };

/** What partial-success messages call each signal's items. */
export const nouns: Readonly<Record<SignalName, string>> = { traces: 'spans', logs: 'log records', metrics: 'data points' };
