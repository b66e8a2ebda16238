// The logs the conformance test sends: made by the OTel JS SDK and sent with
// the official http/protobuf exporter, as a user's application would. Three
// services with different stream labels, plain, logfmt and JSON bodies, log
// attributes of each type, severities, and trace context on some records;
// timestamps on a 10 s grid inside one hour. `fixtureRecords` is the same
// data as plain values, from which the test derives its expected answers.
import { context, trace, TraceFlags } from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';

interface Service {
  readonly resource: Attributes;
  readonly lines: (i: number) => { body: string; attributes: Attributes };
}

const severities: readonly (readonly [SeverityNumber, string])[] = [
  [SeverityNumber.INFO, 'INFO'],
  [SeverityNumber.INFO, 'INFO'],
  [SeverityNumber.WARN, 'WARN'],
  [SeverityNumber.ERROR, 'ERROR'],
  [SeverityNumber.DEBUG, 'DEBUG'],
];

const paths = ['/api/cart', '/api/pay', '/health', '/api/items'];

/** The services of a tenant; `tag` goes into every body so tenants' lines differ. */
function services(tenant: string, tag: string): Service[] {
  const common = { 'tenant.id': tenant, 'host.name': `host-${tag}` };
  return [
    {
      resource: {
        ...common,
        'service.name': 'checkout',
        'service.namespace': 'shop',
        'deployment.environment': 'prod',
        'k8s.namespace.name': 'shop',
        'k8s.pod.name': `checkout-${tag}`,
        'service.version': '1.4.2',
      },
      lines: (i) => ({
        body: `${tag} method=${i % 3 === 0 ? 'POST' : 'GET'} path=${paths[i % paths.length] ?? ''} status=${i % 7 === 0 ? 500 : 200} duration=${(i * 37) % 900}ms msg="request done" service_version=2.${i % 3}`,
        attributes: {
          'http.method': i % 3 === 0 ? 'POST' : 'GET',
          'user.id': i % 5,
          retry: i % 4 === 0,
          'http.request-id': `r-${i}`,
          'odd..__key': 'x',
          '9lives': i % 2,
        },
      }),
    },
    {
      resource: { ...common, 'service.name': 'payments', 'service.namespace': 'shop', 'deployment.environment': 'dev', 'cloud.region': 'eu-west-1' },
      lines: (i) => ({
        body: JSON.stringify({
          tag,
          status: i % 6 === 0 ? 502 : 201,
          amount: (i * 13) % 250,
          currency: i % 2 === 0 ? 'EUR' : 'USD',
          user: { id: `u${i % 4}`, tier: i % 3 === 0 ? 'gold' : 'basic' },
        }),
        attributes: { 'payment.provider': i % 2 === 0 ? 'stripe' : 'adyen', 'amount.cents': ((i * 13) % 250) * 100 },
      }),
    },
    {
      resource: { ...common, 'service.name': 'frontend', 'deployment.environment': 'prod', 'k8s.namespace.name': 'web' },
      lines: (i) => ({
        body: `${tag} ${i % 5 === 0 ? 'ERROR failed to render page' : i % 2 === 0 ? 'rendered page in 12ms' : 'served static asset'} id=${i}`,
        attributes: { 'page.name': i % 2 === 0 ? 'home' : 'cart' },
      }),
    },
  ];
}

/** The instrumentation scope every record is emitted under. */
export const scope = { name: 'shop-logger', version: '2.0.1' } as const;

/** One record as sent: its resource, body, attributes, severity, times (ms) and trace context. */
export interface FixtureRecord {
  readonly resource: Attributes;
  readonly body: string;
  readonly attributes: Attributes;
  readonly severityNumber: SeverityNumber;
  readonly severityText: string;
  readonly timestampMs: number;
  readonly observedMs: number;
  readonly trace?: { readonly traceId: string; readonly spanId: string; readonly flags: number };
}

/** Records of one tenant as plain data, per service: `perService` lines, 10 s apart from `startMs` (service s offset by s seconds). */
export function fixtureRecords(tenant: string, tag: string, startMs: number, perService: number): FixtureRecord[][] {
  return services(tenant, tag).map((service, s) =>
    Array.from({ length: perService }, (_, i) => {
      const [severityNumber, severityText] = severities[(i + s) % severities.length] ?? [SeverityNumber.INFO, 'INFO'];
      const line = service.lines(i);
      const timestampMs = startMs + i * 10_000 + s * 1000;
      const traced =
        i % 3 === 1
          ? {
              traceId: (i * 7919 + s + 1).toString(16).padStart(32, '0'),
              spanId: (i * 104729 + s + 1).toString(16).padStart(16, '0'),
              flags: TraceFlags.SAMPLED,
            }
          : undefined;
      return {
        resource: service.resource,
        body: line.body,
        attributes: line.attributes,
        severityNumber,
        severityText,
        timestampMs,
        observedMs: timestampMs + 5,
        ...(traced === undefined ? {} : { trace: traced }),
      };
    }),
  );
}

/** Records of one tenant, made by the SDK: `fixtureRecords` emitted through a LoggerProvider per service. */
export function tenantLogs(tenant: string, tag: string, startMs: number, perService: number): ReadableLogRecord[][] {
  return fixtureRecords(tenant, tag, startMs, perService).map((records) => {
    const memory = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({
      resource: resourceFromAttributes(records[0]?.resource ?? {}),
      processors: [new SimpleLogRecordProcessor({ exporter: memory })],
    });
    const logger = provider.getLogger(scope.name, scope.version);
    for (const r of records) {
      const traced =
        r.trace === undefined
          ? undefined
          : trace.setSpanContext(context.active(), { traceId: r.trace.traceId, spanId: r.trace.spanId, traceFlags: r.trace.flags });
      logger.emit({
        body: r.body,
        attributes: r.attributes,
        severityNumber: r.severityNumber,
        severityText: r.severityText,
        timestamp: r.timestampMs,
        observedTimestamp: r.observedMs,
        ...(traced === undefined ? {} : { context: traced }),
      });
    }
    return memory.getFinishedLogRecords();
  });
}

/** Sends records with the official http/protobuf exporter to `url` (an /otlp/v1/logs or /v1/logs endpoint). */
export async function exportLogs(url: string, headers: Record<string, string>, records: ReadableLogRecord[]): Promise<ExportResult> {
  const exporter = new OTLPLogExporter({ url, headers });
  const result = await new Promise<ExportResult>((resolve) => {
    exporter.export(records, resolve);
  });
  await exporter.shutdown();
  return result;
}
