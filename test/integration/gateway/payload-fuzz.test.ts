// Random and mutated payloads at the gateway, protobuf and OTLP/JSON, all
// three signals, over HTTP and gRPC: every answer is 200 or 400 (OK or
// INVALID_ARGUMENT), never a crash, a hang, a 5xx or INTERNAL (a 503 would
// mean a malformed item reached ClickHouse and poisoned a batch). Runs are
// bounded and seeded: a failure names its seed and path to replay.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import fc from 'fast-check';
import { startTestGateway, keys } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { grpcExport, logsPath, tracePath } from './support/grpc-client.ts';
import { keyValue, nestedKvlist, request, span, stringValue } from './support/hostile-otlp.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest } from '../../../gateway/wire/otlp-messages.ts';
import type { SignalName } from '../../../gateway/wire/otlp-messages.ts';
import { encoders, logsRequest, metricsRequest, otlpJson, tracesRequest } from '../../unit/gateway/support/otlp-arbitraries.ts';
import { jsonHeaders, logsProtobuf, metricsProtobuf, post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

/** fast-check's seed for every property here: a failing run is replayed with the seed and path it reports. */
const seed = 20_261_123;
const grpcPaths: Readonly<Record<SignalName, string>> = {
  traces: tracePath,
  logs: logsPath,
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
};
/** Random requests of every signal (test/unit/gateway/support/otlp-arbitraries.ts), tenant rules and 64-bit timestamps included. */
const randomRequest = fc.oneof(
  tracesRequest.map((r) => ['traces', r] as const),
  logsRequest.map((r) => ['logs', r] as const),
  metricsRequest.map((r) => ['metrics', r] as const),
);

const seeds: readonly (readonly [SignalName, Buffer])[] = [
  [
    'traces',
    tracesProtobuf(
      tracesJson({ 'tenant.id': 'fuzz', 'service.name': 'f' }, [
        { name: 'a', attrs: { k: 1, b: true, d: { double: 2.5 } } },
        { name: 'b', attrs: { 'tenant.id': 'x' } },
      ]),
    ),
  ],
  [
    'traces',
    request(
      [keyValue('tenant.id', stringValue('fuzz'))],
      [span('nested', [keyValue('n', nestedKvlist(15, stringValue('leaf')))]), span('deep', [keyValue('d', nestedKvlist(40, stringValue('x')))])],
    ),
  ],
  [
    'logs',
    logsProtobuf({ 'tenant.id': 'fuzz' }, [
      { body: 'hello', attrs: { n: 3 } },
      { body: 'x', attrs: { 'tenant.id': 7 } },
    ]),
  ],
  ['metrics', metricsProtobuf({ 'tenant.id': 'fuzz' }, [{ a: 'b' }, { 'tenant.id': 'y' }])],
  ['metrics', everyMetricType()],
];

/** The seeds as OTLP/JSON text, for mutations of JSON. */
const jsonSeeds: readonly (readonly [SignalName, string])[] = [
  [
    'traces',
    JSON.stringify(
      tracesJson({ 'tenant.id': 'fuzz', 'service.name': 'f' }, [
        { name: 'a', attrs: { k: 1, b: true, d: { double: 2.5 } } },
        { name: 'b', attrs: { 'tenant.id': 'x' } },
      ]),
    ),
  ],
  [
    'logs',
    otlpJson(
      ExportLogsServiceRequest.toObject(ExportLogsServiceRequest.decode(logsProtobuf({ 'tenant.id': 'fuzz' }, [{ body: 'hello', attrs: { n: 3 } }])), {
        longs: String,
      }),
    ),
  ],
  ['metrics', otlpJson(ExportMetricsServiceRequest.toObject(ExportMetricsServiceRequest.decode(everyMetricType()), { longs: String }))],
];

/** Pieces of OTLP/JSON that mutations splice in: structure, odd values, and nesting. */
const jsonFragments = [
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  'null',
  '-1',
  '1e999',
  '"18446744073709551616"',
  '{"kvlistValue":{"values":[{"key":"k","value":',
  '{"arrayValue":{"values":[',
  '\\u0000',
  '"__proto__"',
  '{"__proto__":{}}',
  '"\\ud800"',
];

const textMutation = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), fragment: fc.constantFrom(...jsonFragments) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), fragment: fc.oneof(fc.constantFrom(...jsonFragments), fc.string({ maxLength: 4 })) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);
type TextMutation = typeof textMutation extends fc.Arbitrary<infer M> ? M : never;

function mutateText(seedText: string, mutations: TextMutation[]): string {
  let t = seedText;
  for (const m of mutations) {
    const at = t.length === 0 ? 0 : m.at % t.length;
    switch (m.kind) {
      case 'replace':
        t = t.slice(0, at) + m.fragment + t.slice(at + 1);
        break;
      case 'insert':
        t = t.slice(0, at) + m.fragment + t.slice(at);
        break;
      case 'delete':
        t = t.slice(0, at) + t.slice(at + m.count);
        break;
      case 'truncate':
        t = t.slice(0, at);
        break;
    }
  }
  return t;
}

/** One point of each of the five metric types, with nested attribute values, for the protobuf metrics reader. */
function everyMetricType(): Buffer {
  const point = {
    timeUnixNano: (BigInt(Date.now()) * 1_000_000n).toString(),
    attributes: [{ key: 'n', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } } }],
  };
  const message = ExportMetricsServiceRequest.fromObject({
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'tenant.id', value: { stringValue: 'fuzz' } }] },
        scopeMetrics: [
          {
            scope: { name: 's' },
            metrics: [
              { name: 'g', gauge: { dataPoints: [{ ...point, asInt: 3 }] } },
              { name: 's', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ ...point, asDouble: 1.5 }] } },
              {
                name: 'h',
                histogram: {
                  aggregationTemporality: 1,
                  dataPoints: [{ ...point, count: 3, sum: 2, min: 0.5, max: 1, bucketCounts: [1, 2], explicitBounds: [1] }],
                },
              },
              {
                name: 'e',
                exponentialHistogram: {
                  dataPoints: [
                    { ...point, count: 3, scale: -2, zeroCount: 1, positive: { offset: -1, bucketCounts: [1, 1] }, negative: { bucketCounts: [1] } },
                  ],
                },
              },
              {
                name: 'q',
                summary: {
                  dataPoints: [
                    {
                      ...point,
                      count: 2,
                      sum: 3,
                      quantileValues: [
                        { quantile: 0.5, value: 1 },
                        { quantile: 1, value: 2 },
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
      case 'flip':
        b[at] = m.value;
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.count)]);
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
    }
  }
  return b;
}

describe('gateway: fuzzed payloads', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('fuzz', { writer: { maxBatchDelayMs: 1 } });
  });
  after(async () => {
    await gw.close();
  });

  const answer = async (path: string, body: Uint8Array | string, headers: Record<string, string>): Promise<number> => {
    const res = await post(`${gw.httpUrl}${path}`, body, { ...headers });
    return res.status;
  };

  /** The gRPC code name of an export of `body`. */
  const grpcAnswer = async (signal: SignalName, body: Buffer): Promise<string> =>
    grpc.status[(await grpcExport(gw.grpcUrl, grpcPaths[signal], body, keys.admin)).code];

  it('answers mutated protobuf with 200 or 400 only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 4 }), async ([signal, seedBody], mutations) => {
        const status = await answer(`/v1/${signal}`, mutate(seedBody, mutations), protobufHeaders(keys.admin));
        expect([200, 400]).to.include(status);
      }),
      { numRuns: 300, seed },
    );
  });

  it('answers mutated protobuf over gRPC with OK or INVALID_ARGUMENT only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 4 }), async ([signal, seedBody], mutations) => {
        expect(['OK', 'INVALID_ARGUMENT']).to.include(await grpcAnswer(signal, mutate(seedBody, mutations)));
      }),
      { numRuns: 150, seed },
    );
  });

  it('answers random requests of every signal, in protobuf over HTTP and gRPC and in OTLP/JSON, with 200 or 400 only', async () => {
    await fc.assert(
      fc.asyncProperty(randomRequest, async ([signal, random]) => {
        const protobuf = Buffer.from(encoders[signal](random));
        expect([200, 400]).to.include(await answer(`/v1/${signal}`, protobuf, protobufHeaders(keys.admin)));
        expect([200, 400]).to.include(await answer(`/v1/${signal}`, otlpJson(random), jsonHeaders(keys.admin)));
        expect(['OK', 'INVALID_ARGUMENT']).to.include(await grpcAnswer(signal, protobuf));
      }),
      { numRuns: 120, seed },
    );
  });

  it('answers mutated OTLP/JSON of every signal with 200 or 400 only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...jsonSeeds), fc.array(textMutation, { minLength: 1, maxLength: 4 }), async ([signal, seedText], mutations) => {
        expect([200, 400]).to.include(await answer(`/v1/${signal}`, mutateText(seedText, mutations), jsonHeaders(keys.admin)));
      }),
      { numRuns: 300, seed },
    );
  });

  it('answers random bytes with 200 or 400 only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('traces', 'logs', 'metrics'), fc.uint8Array({ maxLength: 512 }), async (signal, bytes) => {
        expect([200, 400]).to.include(await answer(`/v1/${signal}`, bytes, protobufHeaders(keys.admin)));
      }),
      { numRuns: 200, seed },
    );
  });

  it('answers random JSON with 200 or 400 only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('traces', 'logs', 'metrics'), fc.jsonValue({ maxDepth: 6 }), async (signal, value) => {
        expect([200, 400]).to.include(await answer(`/v1/${signal}`, JSON.stringify(value), jsonHeaders(keys.admin)));
      }),
      { numRuns: 200, seed },
    );
  });

  it('answers JSON with odd field values in valid places with 200 or 400 only', async () => {
    const oddValue = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant('18446744073709551615'),
      fc.constant('-1'),
      fc.constant([]),
      fc.constant({}),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'traceId',
          'spanId',
          'startTimeUnixNano',
          'endTimeUnixNano',
          'kind',
          'flags',
          'name',
          'attributes',
          'status',
          'events',
          'droppedAttributesCount',
        ),
        oddValue,
        async (field, value) => {
          const json = tracesJson({ 'tenant.id': 'odd' }, [{ name: 'x' }]) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
          const span = json.resourceSpans[0]?.scopeSpans[0]?.spans[0];
          if (span !== undefined) span[field] = value;
          expect([200, 400]).to.include(await answer('/v1/traces', JSON.stringify(json), jsonHeaders(keys.admin)));
        },
      ),
      { numRuns: 200, seed },
    );
  });
});
