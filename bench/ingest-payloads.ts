// Realistic OTLP export requests for the ingest benchmark: 1,000 items per
// request, 8 resource attributes, 10 span/log attributes, 2 events per span.
import { randomBytes } from 'node:crypto';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../gateway/wire/otlp-messages.ts';

const kv = (key: string, value: string | number): object => ({ key, value: typeof value === 'string' ? { stringValue: value } : { intValue: value } });

function resource(tenant: string, i: number): object {
  return {
    attributes: [
      kv('tenant.id', tenant),
      kv('service.name', `checkout-${i % 5}`),
      kv('service.version', '1.42.0'),
      kv('deployment.environment', 'production'),
      kv('host.name', `ip-10-0-${i % 7}-${i % 200}.ec2.internal`),
      kv('k8s.pod.name', `checkout-7d9f8c-${i % 50}`),
      kv('k8s.namespace.name', 'shop'),
      kv('telemetry.sdk.language', 'nodejs'),
    ],
  };
}

function spanAttributes(i: number): object[] {
  return [
    kv('http.request.method', i % 3 === 0 ? 'POST' : 'GET'),
    kv('url.path', `/api/v1/cart/${i % 1000}`),
    kv('http.response.status_code', i % 50 === 0 ? 500 : 200),
    kv('server.address', 'checkout.shop.svc'),
    kv('server.port', 8080),
    kv('user_agent.original', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36'),
    kv('network.protocol.version', '1.1'),
    kv('client.address', `10.1.${i % 255}.${(i * 7) % 255}`),
    kv('app.cart.items', i % 12),
    kv('app.customer.tier', i % 4 === 0 ? 'gold' : 'standard'),
  ];
}

/** One ExportTraceServiceRequest of `count` spans, encoded. */
export function tracesRequest(count: number, tenant: string, seed: number): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: count }, (_, i) => {
    const start = now - BigInt(i) * 1_000_000n;
    return {
      traceId: randomBytes(16),
      spanId: randomBytes(8),
      parentSpanId: i % 4 === 0 ? new Uint8Array() : randomBytes(8),
      name: `HTTP ${i % 3 === 0 ? 'POST' : 'GET'} /api/v1/cart`,
      kind: 2,
      startTimeUnixNano: start.toString(),
      endTimeUnixNano: (start + 2_345_678n).toString(),
      attributes: spanAttributes(i + seed),
      events: [
        { timeUnixNano: (start + 1000n).toString(), name: 'cache.lookup', attributes: [kv('cache.hit', 'false')] },
        { timeUnixNano: (start + 2000n).toString(), name: 'db.query', attributes: [kv('db.rows', 12)] },
      ],
      status: { code: i % 50 === 0 ? 2 : 1, message: i % 50 === 0 ? 'internal error' : '' },
    };
  });
  const message = ExportTraceServiceRequest.fromObject({
    resourceSpans: [{ resource: resource(tenant, seed), scopeSpans: [{ scope: { name: '@opentelemetry/instrumentation-http', version: '0.200.0' }, spans }] }],
  });
  return Buffer.from(ExportTraceServiceRequest.encode(message).finish());
}

/** One ExportLogsServiceRequest of `count` log records, encoded. */
export function logsRequest(count: number, tenant: string, seed: number): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const logRecords = Array.from({ length: count }, (_, i) => ({
    timeUnixNano: (now - BigInt(i) * 1_000_000n).toString(),
    observedTimeUnixNano: now.toString(),
    severityNumber: i % 10 === 0 ? 17 : 9,
    severityText: i % 10 === 0 ? 'ERROR' : 'INFO',
    body: { stringValue: `request ${i + seed} served in ${i % 250} ms for customer ${(i * 31) % 10_000}` },
    traceId: randomBytes(16),
    spanId: randomBytes(8),
    attributes: spanAttributes(i + seed),
  }));
  const message = ExportLogsServiceRequest.fromObject({
    resourceLogs: [{ resource: resource(tenant, seed), scopeLogs: [{ scope: { name: 'pino' }, logRecords }] }],
  });
  return Buffer.from(ExportLogsServiceRequest.encode(message).finish());
}

/**
 * One ExportMetricsServiceRequest of `count` data points, encoded: per 100 points, 40 gauge,
 * 40 monotonic sum and 20 histogram points (15 buckets), each with 4 attributes.
 */
export function metricsRequest(count: number, tenant: string, seed: number): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const point = (i: number): Record<string, unknown> => ({
    attributes: [
      kv('http.request.method', i % 3 === 0 ? 'POST' : 'GET'),
      kv('http.route', `/api/v1/cart/${i % 20}`),
      kv('http.response.status_code', i % 50 === 0 ? 500 : 200),
      kv('server.port', 8080),
    ],
    startTimeUnixNano: (now - 60_000_000_000n).toString(),
    timeUnixNano: (now - BigInt(i) * 1_000_000n).toString(),
  });
  const group = (i: number, n: number, make: (i: number) => object): object[] => Array.from({ length: n }, (_, k) => make(i + k));
  const metrics: object[] = [];
  for (let i = 0; i < count; i += 100) {
    metrics.push(
      { name: 'process.memory.usage', unit: 'By', gauge: { dataPoints: group(i, 40, (k) => ({ ...point(k + seed), asDouble: 1e8 + k })) } },
      {
        name: 'http.server.request.count',
        unit: '1',
        sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: group(i, 40, (k) => ({ ...point(k + seed), asInt: 1000 + k })) },
      },
      {
        name: 'http.server.request.duration',
        unit: 's',
        histogram: {
          aggregationTemporality: 2,
          dataPoints: group(i, 20, (k) => ({
            ...point(k + seed),
            count: 150,
            sum: 12.5 + k,
            min: 0.001,
            max: 2.5,
            bucketCounts: [1, 2, 4, 8, 16, 32, 40, 20, 10, 8, 4, 2, 1, 1, 1, 0],
            explicitBounds: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15],
          })),
        },
      },
    );
  }
  const message = ExportMetricsServiceRequest.fromObject({
    resourceMetrics: [{ resource: resource(tenant, seed), scopeMetrics: [{ scope: { name: '@opentelemetry/sdk-metrics', version: '2.0.0' }, metrics }] }],
  });
  return Buffer.from(ExportMetricsServiceRequest.encode(message).finish());
}
