// The traces the Tempo differential test sends to Tempo and to Tenantry:
// made by the official OTel JS SDK with fixed times, so both systems hold
// exactly the same spans. Every intrinsic and every attribute type has
// values that separate traces: service names, kinds, statuses, durations
// from 1 ms to 2 s, string/int/double/bool attributes, span and resource
// scopes, and root spans whose names differ.
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

const services = ['checkout', 'cart', 'payment'] as const;
const methods = ['GET', 'POST', 'PUT'] as const;
const regions = ['eu-west', 'us-east'] as const;

/** One tenant's spans: `traces` traces of 2-4 spans each, ending at `endMs` at the latest. */
export function traceCorpus(tenant: string, traces: number, endMs: number, marker = 'shop'): ReadableSpan[] {
  const out: ReadableSpan[] = [];
  for (let t = 0; t < traces; t++) {
    const service = services[t % services.length] ?? 'checkout';
    const memory = new InMemorySpanExporter();
    const resource = resourceFromAttributes({
      'service.name': `${marker}-${service}`,
      'tenant.id': tenant,
      'deployment.region': regions[t % 2] ?? 'eu-west',
      'host.cores': 2 + (t % 3),
    });
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const tracer = provider.getTracer('corpus', '1.0.0');
    const start = endMs - 60_000 + t * 1000;
    const rootMs = [3, 40, 250, 1200, 2000][t % 5] ?? 3;
    const method = methods[t % methods.length] ?? 'GET';
    const status = 200 + (t % 4 === 3 ? 300 : 0) + (t % 7);
    const rootAttributes: Attributes = {
      'http.method': method,
      'http.status_code': status,
      'http.route': `/api/${service}/${t % 4}`,
      'sample.ratio': (t % 10) / 4 + 0.5,
      cached: t % 2 === 0,
    };
    const root = tracer.startSpan(`${method} /api/${service}`, { kind: SpanKind.SERVER, startTime: start, attributes: rootAttributes });
    const parent = trace.setSpan(context.active(), root);
    const children: Span[] = [];
    const db = tracer.startSpan(
      t % 3 === 0 ? 'SELECT orders' : 'SELECT carts',
      {
        kind: SpanKind.CLIENT,
        startTime: start + 1,
        attributes: { 'db.system': t % 2 === 0 ? 'postgresql' : 'redis', 'db.rows': t * 3 },
      },
      parent,
    );
    if (t % 4 === 1) db.setStatus({ code: SpanStatusCode.ERROR, message: 'connection reset' });
    children.push(db);
    if (t % 2 === 0) {
      const work = tracer.startSpan('render', { kind: SpanKind.INTERNAL, startTime: start + 1, attributes: { 'template.name': `page-${t % 3}` } }, parent);
      children.push(work);
    }
    if (t % 3 === 0) {
      const send = tracer.startSpan('publish order', { kind: SpanKind.PRODUCER, startTime: start + 1, attributes: { 'messaging.system': 'kafka' } }, parent);
      children.push(send);
    }
    children.forEach((c, i) => {
      c.end(start + 1 + Math.max(1, Math.floor(rootMs / (i + 2))));
    });
    root.setStatus(
      t % 5 === 4 ? { code: SpanStatusCode.ERROR, message: 'upstream failed' } : t % 5 === 0 ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.OK },
    );
    root.end(start + rootMs);
    out.push(...memory.getFinishedSpans());
  }
  return out;
}

/** Sends spans with the official http/protobuf exporter; `headers` carry the key or X-Scope-OrgID. */
export async function exportSpans(url: string, headers: Record<string, string>, spans: ReadableSpan[]): Promise<void> {
  const exporter = new OTLPTraceExporter({ url, headers });
  const result = await new Promise<ExportResult>((resolve) => {
    exporter.export(spans, resolve);
  });
  await exporter.shutdown();
  if (result.code !== ExportResultCode.SUCCESS) throw new Error(`export to ${url} failed: ${String(result.error)}`);
}

/** The trace ids (hex) of a corpus, in order of first appearance. */
export function traceIds(spans: readonly ReadableSpan[]): string[] {
  return [...new Set(spans.map((s) => s.spanContext().traceId))];
}
