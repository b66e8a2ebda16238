// The OTLP/protobuf bodies that bench:peers sends, identical for Tenantry and
// each peer: 1,000 items per request, traces of 10 spans, logs that carry
// the trace and span ids of those traces, metric points. Every request must
// carry new items (a store may drop a log line with the timestamp and text of
// one it has, or merge spans into the trace of their id; a metrics store
// refuses a sample at or before the last of its series), and encoding 1,000 items per request
// would cost the client more CPU than the servers spend, so a few templates
// are encoded once and each request is a copy with its trace ids and
// timestamps rewritten in place (fixed-size fields: 16-byte ids, fixed64 times).
import { randomBytes } from 'node:crypto';
import { opentelemetry } from '../../proto/gen/otlp.js';

// The generated classes themselves (npm run proto), not the gateway's names for them: the bench
// must not depend on how the product's code is laid out.
const { ExportLogsServiceRequest } = opentelemetry.proto.collector.logs.v1;
const { ExportTraceServiceRequest } = opentelemetry.proto.collector.trace.v1;
const { ExportMetricsServiceRequest } = opentelemetry.proto.collector.metrics.v1;

export const itemsPerRequest = 1000;
export const spansPerTrace = 10;
export const tracesPerRequest = itemsPerRequest / spansPerTrace;
export const tenants = ['tenant-0', 'tenant-1', 'tenant-2'] as const;
const templateCount = 8;

export type Signal = 'logs' | 'traces' | 'metrics';

const kv = (key: string, value: string | number): object => ({ key, value: typeof value === 'string' ? { stringValue: value } : { intValue: value } });

/** Resource attributes as bench/ingest-payloads.ts has them; `service.name` is what every peer indexes first. */
function resource(tenant: string, seed: number): object {
  return {
    attributes: [
      kv('tenant.id', tenant),
      kv('service.name', serviceName(seed)),
      kv('service.version', '1.42.0'),
      kv('deployment.environment', 'production'),
      kv('host.name', `ip-10-0-${seed % 7}-${seed % 200}.ec2.internal`),
      kv('k8s.pod.name', `checkout-7d9f8c-${seed % 50}`),
      kv('k8s.namespace.name', 'shop'),
      kv('telemetry.sdk.language', 'nodejs'),
    ],
  };
}

const serviceName = (seed: number): string => `checkout-${seed % 5}`;

function attributes(i: number): object[] {
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

/** An encoded request and where its trace ids and timestamps are, to be rewritten per request. */
interface Template {
  readonly tenant: string;
  readonly service: string;
  readonly body: Buffer;
  /** Offsets of every 16-byte trace id (each trace's ids in the order of `traceIds`). */
  readonly traceIdOffsets: readonly number[];
  /** The trace ids of the template, one per trace (10 spans, or 10 logs, each). */
  readonly traceIds: readonly Buffer[];
  /** Offsets of every fixed64 timestamp. */
  readonly timeOffsets: readonly number[];
  /** When the template's timestamps were taken (ms since epoch). */
  readonly epochMs: number;
}

/**
 * Offsets of the 16-byte trace ids (length-delimited, field 1 of a Span or 9 of a LogRecord)
 * and of the fixed64 timestamps among `times` (any field), found in one pass over the body.
 */
function locate(body: Buffer, traceIds: ReadonlySet<string>, times: ReadonlySet<bigint>): { traceIdOffsets: number[]; timeOffsets: number[] } {
  const traceIdOffsets: number[] = [];
  const timeOffsets: number[] = [];
  const fixed64Tags = new Set([0x09, 0x39, 0x41, 0x59]);
  for (let p = 0; p + 9 <= body.length; p++) {
    const tag = body[p] ?? 0;
    if ((tag === 0x0a || tag === 0x4a) && body[p + 1] === 16 && p + 18 <= body.length && traceIds.has(body.toString('hex', p + 2, p + 18))) {
      traceIdOffsets.push(p + 2);
      p += 17;
    } else if (fixed64Tags.has(tag) && times.has(body.readBigUInt64LE(p + 1))) {
      timeOffsets.push(p + 1);
      p += 8;
    }
  }
  return { traceIdOffsets, timeOffsets };
}

function template(signal: 'logs' | 'traces', index: number): Template {
  const tenant = tenants[index % tenants.length] ?? 'tenant-0';
  const seed = index * 1000;
  const epochMs = Date.now();
  const now = BigInt(epochMs) * 1_000_000n;
  // A trace id never starts with a zero byte: some trace stores drop leading zeros of ids.
  const traceIds = Array.from({ length: tracesPerRequest }, () => {
    const id = randomBytes(16);
    id[0] = (id[0] ?? 0) | 0x10;
    return id;
  });
  const spanIds = traceIds.map(() => Array.from({ length: spansPerTrace }, () => randomBytes(8)));
  const times = new Set<bigint>();
  // Distinct timestamps (ns), each findable in the encoding by its 8 bytes.
  const time = (traceNo: number, spanNo: number, offset: bigint): bigint => {
    const t = now - BigInt(traceNo) * 7_000_000n + BigInt(spanNo) * 100_000n + offset;
    times.add(t);
    return t;
  };
  let body: Buffer;
  if (signal === 'traces') {
    const spans = traceIds.flatMap((traceId, t) =>
      Array.from({ length: spansPerTrace }, (_, s) => {
        const start = time(t, s, 0n);
        return {
          traceId,
          spanId: spanIds[t]?.[s],
          parentSpanId: s === 0 ? new Uint8Array() : spanIds[t]?.[s === 1 ? 0 : 1],
          name: s === 0 ? `HTTP ${t % 3 === 0 ? 'POST' : 'GET'} /api/v1/cart` : `SELECT shop.cart_${s}`,
          kind: s === 0 ? 2 : 3,
          startTimeUnixNano: start.toString(),
          endTimeUnixNano: time(t, s, 2_345_678n - BigInt(s) * 1000n).toString(),
          attributes: attributes(seed + t * spansPerTrace + s),
          events: [
            { timeUnixNano: time(t, s, 1000n).toString(), name: 'cache.lookup', attributes: [kv('cache.hit', 'false')] },
            { timeUnixNano: time(t, s, 2000n).toString(), name: 'db.query', attributes: [kv('db.rows', 12)] },
          ],
          status: { code: s === 0 && t % 50 === 0 ? 2 : 1, message: s === 0 && t % 50 === 0 ? 'internal error' : '' },
        };
      }),
    );
    const message = ExportTraceServiceRequest.fromObject({
      resourceSpans: [
        { resource: resource(tenant, index), scopeSpans: [{ scope: { name: '@opentelemetry/instrumentation-http', version: '0.200.0' }, spans }] },
      ],
    });
    body = Buffer.from(ExportTraceServiceRequest.encode(message).finish());
  } else {
    const observed = time(0, 0, 3_000_000n);
    const logRecords = traceIds.flatMap((traceId, t) =>
      Array.from({ length: spansPerTrace }, (_, s) => {
        const i = t * spansPerTrace + s;
        return {
          timeUnixNano: time(t, s, 500n).toString(),
          observedTimeUnixNano: observed.toString(),
          severityNumber: i % 10 === 0 ? 17 : 9,
          severityText: i % 10 === 0 ? 'ERROR' : 'INFO',
          body: { stringValue: `request ${i + seed} served in ${i % 250} ms for customer ${(i * 31) % 10_000}` },
          traceId,
          spanId: spanIds[t]?.[s],
          attributes: attributes(seed + i),
        };
      }),
    );
    const message = ExportLogsServiceRequest.fromObject({
      resourceLogs: [{ resource: resource(tenant, index), scopeLogs: [{ scope: { name: 'pino' }, logRecords }] }],
    });
    body = Buffer.from(ExportLogsServiceRequest.encode(message).finish());
  }
  const { traceIdOffsets, timeOffsets } = locate(body, new Set(traceIds.map((id) => id.toString('hex'))), times);
  if (traceIdOffsets.length !== itemsPerRequest)
    throw new Error(`template ${signal} ${index}: found ${traceIdOffsets.length} trace ids, expected ${itemsPerRequest}`);
  const expectedTimes = signal === 'traces' ? itemsPerRequest * 4 : itemsPerRequest * 2;
  if (timeOffsets.length !== expectedTimes) throw new Error(`template ${signal} ${index}: found ${timeOffsets.length} timestamps, expected ${expectedTimes}`);
  return { tenant, service: serviceName(index), body, traceIdOffsets, traceIds, timeOffsets, epochMs };
}

/** One request: its body, its tenant, and what identifies its items in queries. */
export interface Request {
  readonly signal: Signal;
  readonly seq: number;
  readonly tenant: string;
  readonly service: string;
  readonly body: Buffer;
  /** The request's trace ids (lower-case hex), each with 10 spans or 10 logs. */
  readonly traceIds: readonly string[];
}

/** Makes requests with items never sent before: a global sequence number goes into every trace id, and every timestamp moves to now. */
export class RequestFactory {
  readonly #templates: Record<'logs' | 'traces', readonly Template[]>;
  #seq = 0;
  #lastMetricsMs = 0;

  constructor() {
    this.#templates = {
      logs: Array.from({ length: templateCount }, (_, i) => template('logs', i)),
      traces: Array.from({ length: templateCount }, (_, i) => template('traces', i)),
    };
  }

  /** Bytes of one request of the signal. */
  size(signal: Signal): number {
    if (signal === 'metrics') return metricsBody('tenant-0', 0, Date.now()).length;
    return this.#templates[signal][0]?.body.length ?? 0;
  }

  next(signal: Signal): Request {
    const seq = ++this.#seq;
    if (signal === 'metrics') {
      // Each request's points are 1 ms after the last request's, whatever the clock says.
      this.#lastMetricsMs = Math.max(Date.now(), this.#lastMetricsMs + 1);
      const tenant = tenants[seq % tenants.length] ?? 'tenant-0';
      return { signal, seq, tenant, service: serviceName(seq), body: metricsBody(tenant, seq, this.#lastMetricsMs), traceIds: [] };
    }
    const t = this.#templates[signal][seq % templateCount];
    if (t === undefined) throw new Error('no template');
    const body = Buffer.from(t.body);
    // Bytes 12..15 of every trace id carry the sequence number: unique across the run.
    for (const at of t.traceIdOffsets) body.writeUInt32BE(seq >>> 0, at + 12);
    // Times move by the wall-clock time since the template was made, plus seq ns so that
    // two requests of one template in the same millisecond still differ.
    const delta = (Date.now() - t.epochMs) * 1_000_000 + (seq % 1_000_000);
    const deltaLo = delta % 2 ** 32;
    const deltaHi = Math.floor(delta / 2 ** 32);
    for (const at of t.timeOffsets) {
      const lo = body.readUInt32LE(at) + deltaLo;
      body.writeUInt32LE(lo % 2 ** 32, at);
      body.writeUInt32LE((body.readUInt32LE(at + 4) + deltaHi + Math.floor(lo / 2 ** 32)) >>> 0, at + 4);
    }
    const traceIds = t.traceIds.map((id) => {
      const patched = Buffer.from(id);
      patched.writeUInt32BE(seq >>> 0, 12);
      return patched.toString('hex');
    });
    return { signal, seq, tenant: t.tenant, service: t.service, body, traceIds };
  }
}

const metricNames = ['http.server.request.duration', 'http.server.active_requests', 'process.cpu.time', 'process.memory.usage', 'db.client.connections.usage'];
const slots = 64;

/**
 * 1,000 points: 5 metrics (cumulative sums and gauges) × 20 series × 10 points
 * 1 ms apart, ending at `endMs`. The series carry the request's slot (seq mod
 * 64) and tenant: requests in flight together never share a series, so no
 * store sees a series' samples out of order; a slot comes back 64 requests
 * later with later times. Encoded per request (a few ms of the bench's CPU).
 */
function metricsBody(tenant: string, seq: number, endMs: number): Buffer {
  const seriesPerMetric = 20;
  const pointsPerSeries = itemsPerRequest / metricNames.length / seriesPerMetric;
  const startNs = (BigInt(endMs) - 3_600_000n) * 1_000_000n;
  const metrics = metricNames.map((name, m) => {
    const dataPoints = Array.from({ length: seriesPerMetric * pointsPerSeries }, (_, i) => {
      const series = Math.floor(i / pointsPerSeries);
      const point = i % pointsPerSeries;
      const timeUnixNano = ((BigInt(endMs) - BigInt(pointsPerSeries - 1 - point)) * 1_000_000n).toString();
      return {
        startTimeUnixNano: startNs.toString(),
        timeUnixNano,
        asDouble: m % 2 === 0 ? seq * 10 + point : (series * 7 + point) % 100,
        attributes: [
          kv('tenant', tenant),
          kv('slot', String(seq % slots)),
          kv('http.route', `/api/v1/cart/${series}`),
          kv('http.request.method', series % 3 === 0 ? 'POST' : 'GET'),
        ],
      };
    });
    return m % 2 === 0 ? { name, unit: 's', sum: { dataPoints, aggregationTemporality: 2, isMonotonic: true } } : { name, unit: '1', gauge: { dataPoints } };
  });
  const message = ExportMetricsServiceRequest.fromObject({
    resourceMetrics: [
      { resource: resource(tenant, seq % templateCount), scopeMetrics: [{ scope: { name: '@opentelemetry/sdk-metrics', version: '2.0.0' }, metrics }] },
    ],
  });
  return Buffer.from(ExportMetricsServiceRequest.encode(message).finish());
}
