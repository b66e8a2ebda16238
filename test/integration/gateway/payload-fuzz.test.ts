// Random and mutated payloads at the gateway: every answer is 200 or 400,
// never a crash, a hang or a 5xx (a 503 would mean a malformed item reached
// ClickHouse and poisoned a batch).
import { expect } from 'chai';
import fc from 'fast-check';
import { startTestGateway, keys } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { ExportMetricsServiceRequest } from '../../../gateway/wire/otlp-messages.ts';
import { jsonHeaders, logsProtobuf, metricsProtobuf, post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

const seeds: readonly (readonly [string, Buffer])[] = [
  ['traces', tracesProtobuf(tracesJson({ 'tenant.id': 'fuzz', 'service.name': 'f' }, [{ name: 'a', attrs: { k: 1, b: true, d: { double: 2.5 } } }, { name: 'b', attrs: { 'tenant.id': 'x' } }]))],
  ['logs', logsProtobuf({ 'tenant.id': 'fuzz' }, [{ body: 'hello', attrs: { n: 3 } }, { body: 'x', attrs: { 'tenant.id': 7 } }])],
  ['metrics', metricsProtobuf({ 'tenant.id': 'fuzz' }, [{ a: 'b' }, { 'tenant.id': 'y' }])],
  ['metrics', everyMetricType()],
];

/** One point of each of the five metric types, with nested attribute values, for the protobuf metrics reader. */
function everyMetricType(): Buffer {
  const point = { timeUnixNano: '1700000000000000000', attributes: [{ key: 'n', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } } }] };
  const message = ExportMetricsServiceRequest.fromObject({
    resourceMetrics: [{
      resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 'fuzz' } }] },
      scopeMetrics: [{
        scope: { name: 's' },
        metrics: [
          { name: 'g', gauge: { dataPoints: [{ ...point, asInt: 3 }] } },
          { name: 's', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ ...point, asDouble: 1.5 }] } },
          { name: 'h', histogram: { aggregationTemporality: 1, dataPoints: [{ ...point, count: 3, sum: 2, min: 0.5, max: 1, bucketCounts: [1, 2], explicitBounds: [1] }] } },
          { name: 'e', exponentialHistogram: { dataPoints: [{ ...point, count: 3, scale: -2, zeroCount: 1, positive: { offset: -1, bucketCounts: [1, 1] }, negative: { bucketCounts: [1] } }] } },
          { name: 'q', summary: { dataPoints: [{ ...point, count: 2, sum: 3, quantileValues: [{ quantile: 0.5, value: 1 }, { quantile: 1, value: 2 }] }] } },
        ],
      }],
    }],
  });
  return Buffer.from(ExportMetricsServiceRequest.encode(message).finish());
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(seed: Buffer, mutations: Mutation[]): Buffer {
  let b = Buffer.from(seed);
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % b.length;
    switch (m.kind) {
      case 'flip': b[at] = m.value; break;
      case 'insert': b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]); break;
      case 'delete': b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.count)]); break;
      case 'truncate': b = b.subarray(0, at); break;
    }
  }
  return b;
}

describe('gateway: fuzzed payloads', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  before(async () => { gw = await startTestGateway('fuzz', { writer: { maxBatchDelayMs: 1 } }); });
  after(async () => { await gw.close(); });

  const answer = async (path: string, body: Uint8Array | string, headers: Record<string, string>): Promise<number> => {
    const res = await post(`${gw.httpUrl}${path}`, body, { ...headers });
    return res.status;
  };

  it('answers mutated protobuf with 200 or 400 only', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 4 }), async ([signal, seed], mutations) => {
      const status = await answer(`/v1/${signal}`, mutate(seed, mutations), protobufHeaders(keys.admin));
      expect([200, 400]).to.include(status);
    }), { numRuns: 300 });
  });

  it('answers random bytes with 200 or 400 only', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom('traces', 'logs', 'metrics'), fc.uint8Array({ maxLength: 512 }), async (signal, bytes) => {
      expect([200, 400]).to.include(await answer(`/v1/${signal}`, bytes, protobufHeaders(keys.admin)));
    }), { numRuns: 200 });
  });

  it('answers random JSON with 200 or 400 only', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom('traces', 'logs', 'metrics'), fc.jsonValue({ maxDepth: 6 }), async (signal, value) => {
      expect([200, 400]).to.include(await answer(`/v1/${signal}`, JSON.stringify(value), jsonHeaders(keys.admin)));
    }), { numRuns: 200 });
  });

  it('answers JSON with odd field values in valid places with 200 or 400 only', async () => {
    const oddValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant('18446744073709551615'), fc.constant('-1'), fc.constant([]), fc.constant({}));
    await fc.assert(fc.asyncProperty(fc.constantFrom('traceId', 'spanId', 'startTimeUnixNano', 'endTimeUnixNano', 'kind', 'flags', 'name', 'attributes', 'status', 'events', 'droppedAttributesCount'), oddValue, async (field, value) => {
      const json = tracesJson({ 'tenant.id': 'odd' }, [{ name: 'x' }]) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
      const span = json.resourceSpans[0]?.scopeSpans[0]?.spans[0];
      if (span !== undefined) span[field] = value;
      expect([200, 400]).to.include(await answer('/v1/traces', JSON.stringify(json), jsonHeaders(keys.admin)));
    }), { numRuns: 200 });
  });
});
