// The OTLP twin of a demo target: the same counters, gauges and classic
// histogram, made by the official OTel JS metrics SDK under OpenTelemetry
// names and units, and exported with the official OTLP/HTTP protobuf exporter
// to Tenantry. Under the OpenTelemetry→Prometheus compatibility names they
// are demo_cpu_usage_seconds_total, demo_memory_usage_bytes, demo_num_cpus
// and demo_api_request_duration_seconds_{bucket,sum,count}, with job and
// instance from service.name and service.instance.id.
import type { ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

export interface OtlpTwinTarget {
  readonly otlpHttpUrl: string;
  readonly key: string;
  readonly tenant: string;
  /** service.name (becomes `job`). */
  readonly job: string;
  /** service.instance.id (becomes `instance`). */
  readonly instance: string;
}

class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

interface Exporter<T> {
  export(items: T, done: (result: ExportResult) => void): void;
}

function send<T>(exporter: Exporter<T>, items: T): Promise<ExportResult> {
  return new Promise<ExportResult>((resolve) => {
    exporter.export(items, resolve);
  });
}

/** Records `rounds` rounds of values and exports the cumulative state after each; resolves when every export was acknowledged. */
export async function exportOtlpTwin(to: OtlpTwinTarget, rounds: number): Promise<ExportResult[]> {
  const reader = new CollectingReader();
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': to.job, 'service.instance.id': to.instance, 'tenant.id': to.tenant }),
    readers: [reader],
  });
  const meter = provider.getMeter('demo-twin');
  const cpu = meter.createCounter('demo.cpu.usage', { unit: 's', description: 'CPU seconds by mode.' });
  const memory = meter.createGauge('demo.memory.usage', { unit: 'By', description: 'Memory by type.' });
  const cpus = meter.createGauge('demo.num.cpus', { description: 'CPUs.' });
  const duration = meter.createHistogram('demo.api.request.duration', {
    unit: 's',
    description: 'API request durations.',
    advice: { explicitBucketBoundaries: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] },
  });
  const exporter = new OTLPMetricExporter({ url: `${to.otlpHttpUrl}/v1/metrics`, headers: { authorization: `Bearer ${to.key}` } });
  const results: ExportResult[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const [i, mode] of ['idle', 'user', 'system'].entries()) cpu.add(round + i * 0.5, { mode });
      for (const [i, type] of ['free', 'used', 'buffers', 'cached'].entries()) memory.record((i + 1) * 1e8 + round * 1000, { type });
      cpus.record(4);
      for (const [i, labels] of [
        { method: 'GET', path: '/api/foo', status: '200' },
        { method: 'POST', path: '/api/foo', status: '200' },
        { method: 'GET', path: '/api/bar', status: '500' },
      ].entries()) {
        duration.record(0.02 * (round + i), labels);
        duration.record(0.3 * (i + 1), labels);
      }
      const { resourceMetrics } = await reader.collect();
      results.push(await send(exporter, resourceMetrics));
    }
  } finally {
    await exporter.shutdown();
    await provider.shutdown();
  }
  return results;
}
