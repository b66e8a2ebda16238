// Telemetry produced by the official OpenTelemetry JS SDK and sent with the
// official OTLP exporters (http/protobuf, http/json, gRPC), so the tests
// exercise what real applications send.
import { Metadata } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as LogsGrpc } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as LogsJson } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as LogsProto } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as MetricsGrpc } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as MetricsJson } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as MetricsProto } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as TracesGrpc } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as TracesJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as TracesProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

export type Protocol = 'http/protobuf' | 'http/json' | 'grpc';
export const protocols: readonly Protocol[] = ['http/protobuf', 'http/json', 'grpc'];

export interface Endpoint {
  readonly httpUrl: string;
  readonly grpcUrl: string;
  readonly key: string;
}

function grpcMetadata(key: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${key}`);
  return metadata;
}

interface Exporter<T> {
  export(items: T, done: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
}

async function send<T>(exporter: Exporter<T>, items: T): Promise<ExportResult> {
  const result = await new Promise<ExportResult>((resolve) => {
    exporter.export(items, resolve);
  });
  await exporter.shutdown();
  return result;
}

export function sendSpans(protocol: Protocol, to: Endpoint, spans: ReadableSpan[], gzip = false): Promise<ExportResult> {
  const headers = { authorization: `Bearer ${to.key}` };
  const compression = gzip ? 'gzip' : 'none';
  switch (protocol) {
    case 'http/protobuf':
      return send(new TracesProto({ url: `${to.httpUrl}/v1/traces`, headers, compression: compression as never }), spans);
    case 'http/json':
      return send(new TracesJson({ url: `${to.httpUrl}/v1/traces`, headers, compression: compression as never }), spans);
    case 'grpc':
      return send(new TracesGrpc({ url: to.grpcUrl, metadata: grpcMetadata(to.key), compression: compression as never }), spans);
  }
}

export function sendLogs(protocol: Protocol, to: Endpoint, records: ReadableLogRecord[]): Promise<ExportResult> {
  const headers = { authorization: `Bearer ${to.key}` };
  switch (protocol) {
    case 'http/protobuf':
      return send(new LogsProto({ url: `${to.httpUrl}/v1/logs`, headers }), records);
    case 'http/json':
      return send(new LogsJson({ url: `${to.httpUrl}/v1/logs`, headers }), records);
    case 'grpc':
      return send(new LogsGrpc({ url: to.grpcUrl, metadata: grpcMetadata(to.key) }), records);
  }
}

export function sendMetrics(protocol: Protocol, to: Endpoint, metrics: ResourceMetrics): Promise<ExportResult> {
  const headers = { authorization: `Bearer ${to.key}` };
  switch (protocol) {
    case 'http/protobuf':
      return send(new MetricsProto({ url: `${to.httpUrl}/v1/metrics`, headers }), metrics);
    case 'http/json':
      return send(new MetricsJson({ url: `${to.httpUrl}/v1/metrics`, headers }), metrics);
    case 'grpc':
      return send(new MetricsGrpc({ url: to.grpcUrl, metadata: grpcMetadata(to.key) }), metrics);
  }
}

/** Spans made by the SDK: a SERVER root with an event and a CLIENT child with an error status and a link. */
export function makeSpans(resource: Attributes, spanAttributes: Attributes[] = [{}]): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes(resource), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('test-scope', '1.2.3');
  for (const attributes of spanAttributes) {
    const root = tracer.startSpan('GET /checkout', { kind: SpanKind.SERVER, attributes: { 'http.method': 'GET', ...attributes } });
    root.addEvent('cache miss', { 'cache.key': 'cart:1' });
    const child = tracer.startSpan(
      'SELECT carts',
      {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system': 'postgresql', ...attributes },
        links: [{ context: root.spanContext(), attributes: { 'link.kind': 'follows' } }],
      },
      trace.setSpan(context.active(), root),
    );
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'connection reset' });
    child.end();
    root.setStatus({ code: SpanStatusCode.OK });
    root.end();
  }
  return memory.getFinishedSpans();
}

/** Log records made by the SDK. */
export function makeLogs(
  resource: Attributes,
  records: { body: string; attributes?: Attributes; severity?: SeverityNumber; severityText?: string }[],
): ReadableLogRecord[] {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: resourceFromAttributes(resource), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  const logger = provider.getLogger('log-scope', '0.1.0');
  for (const r of records) {
    logger.emit({ body: r.body, attributes: r.attributes ?? {}, severityNumber: r.severity ?? SeverityNumber.INFO, severityText: r.severityText ?? 'INFO' });
  }
  return memory.getFinishedLogRecords();
}

class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** Metrics made by the SDK: a counter (monotonic sum), an up-down counter, a histogram and a gauge, per attribute set. */
export async function makeMetrics(resource: Attributes, pointAttributes: Attributes[] = [{}]): Promise<ResourceMetrics> {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ resource: resourceFromAttributes(resource), readers: [reader] });
  const meter = provider.getMeter('metric-scope', '2.0.0');
  const counter = meter.createCounter('requests', { unit: '1', description: 'requests served' });
  const upDown = meter.createUpDownCounter('queue.depth');
  const histogram = meter.createHistogram('latency', { unit: 'ms' });
  const gauge = meter.createGauge('temperature', { unit: 'Cel' });
  for (const attributes of pointAttributes) {
    counter.add(5, attributes);
    upDown.add(-2, attributes);
    histogram.record(12, attributes);
    histogram.record(250, attributes);
    gauge.record(21.5, attributes);
  }
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics;
}
