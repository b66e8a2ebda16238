// The OTLP twin of part of the synthetic dataset: the temperature gauges,
// the counters of two instances (resets included, as new start times) and
// the classic histograms, sent as OTLP/JSON bodies with the very timestamps
// remote write carried, under OpenTelemetry names and units. Read through
// Tenantry's documented OpenTelemetry → Prometheus names (docs/prometheus.md,
// "Names") they are the same series as the remote-written ones:
// synth.temperature (Cel) → synth_temperature_celsius, synth.requests
// (monotonic cumulative sum, {request}) → synth_requests_total,
// synth.http.request.duration (s) → synth_http_request_duration_seconds_
// {bucket,sum,count}; job and instance from service.name and
// service.instance.id.
import type { SeriesSpec } from '../../../../support/remote-write-request.ts';
import { classicBounds, syntheticJob } from './synthetic-series.ts';

/** The counters' instances sent over OTLP (app-3's has a staleness marker, which OTLP has no twin for). */
export const otlpCounterInstances = ['app-1:8080', 'app-2:8080'];

type Attr = { key: string; value: { stringValue: string } };
const attrs = (labels: Readonly<Record<string, string>>, skip: readonly string[]): Attr[] =>
  Object.entries(labels)
    .filter(([k]) => !skip.includes(k))
    .map(([key, v]) => ({ key, value: { stringValue: v } }));
const ns = (ms: number): string => `${BigInt(ms) * 1_000_000n}`;
const resourceKeys = ['__name__', 'job', 'instance', 'le'];

interface Point {
  readonly timestampMs: number;
  readonly value: number;
}
const pointsOf = (s: SeriesSpec): Point[] => (s.samples ?? []).map((x) => ({ timestampMs: x.timestampMs, value: x.value }));

/** Start times of a cumulative series: the first sample's time, and each reset's (a value below the previous one). */
function startTimes(points: readonly Point[]): number[] {
  const out: number[] = [];
  let start = (points[0]?.timestampMs ?? 0) - 1;
  for (const [i, p] of points.entries()) {
    const prev = points[i - 1];
    if (prev !== undefined && p.value < prev.value) start = p.timestampMs - 1;
    out.push(start);
  }
  return out;
}

function resourceMetrics(tenant: string, instance: string, metrics: unknown[]): unknown {
  return {
    resource: {
      attributes: [
        { key: 'service.name', value: { stringValue: syntheticJob } },
        { key: 'service.instance.id', value: { stringValue: instance } },
        { key: 'tenant.id', value: { stringValue: tenant } },
      ],
    },
    scopeMetrics: [{ scope: { name: 'engine-differential' }, metrics }],
  };
}

function gaugeMetric(series: readonly SeriesSpec[]): unknown {
  return {
    name: 'synth.temperature',
    unit: 'Cel',
    gauge: {
      dataPoints: series.flatMap((s) =>
        pointsOf(s).map((p) => ({
          attributes: attrs(s.labels, resourceKeys),
          timeUnixNano: ns(p.timestampMs),
          asDouble: p.value,
        })),
      ),
    },
  };
}

function counterMetric(series: readonly SeriesSpec[]): unknown {
  return {
    name: 'synth.requests',
    unit: '{request}',
    sum: {
      aggregationTemporality: 2,
      isMonotonic: true,
      dataPoints: series.flatMap((s) => {
        const points = pointsOf(s);
        const starts = startTimes(points);
        return points.map((p, i) => ({
          attributes: attrs(s.labels, resourceKeys),
          startTimeUnixNano: ns(starts[i] ?? 0),
          timeUnixNano: ns(p.timestampMs),
          asDouble: p.value,
        }));
      }),
    },
  };
}

/** The classic histogram of one instance and handler, from its remote-written _bucket/_sum/_count series. */
function histogramPoints(all: readonly SeriesSpec[], instance: string, handler: string): unknown[] {
  const mine = all.filter((s) => s.labels['instance'] === instance && s.labels['handler'] === handler);
  const named = (name: string): SeriesSpec[] => mine.filter((s) => s.labels['__name__'] === name);
  const buckets = classicBounds.map((le) => pointsOf(named('synth_http_request_duration_seconds_bucket').find((s) => s.labels['le'] === le) ?? { labels: {} }));
  const sums = pointsOf(named('synth_http_request_duration_seconds_sum')[0] ?? { labels: {} });
  const counts = pointsOf(named('synth_http_request_duration_seconds_count')[0] ?? { labels: {} });
  const starts = startTimes(counts);
  return counts.map((c, i) => {
    const cumulative = buckets.map((b) => b[i]?.value ?? 0);
    return {
      attributes: [{ key: 'handler', value: { stringValue: handler } }],
      startTimeUnixNano: ns(starts[i] ?? 0),
      timeUnixNano: ns(c.timestampMs),
      count: String(c.value),
      sum: sums[i]?.value ?? 0,
      explicitBounds: classicBounds.filter((b) => b !== '+Inf').map(Number),
      bucketCounts: cumulative.map((v, k) => String(v - (k === 0 ? 0 : (cumulative[k - 1] ?? 0)))),
    };
  });
}

/** The OTLP/JSON export requests (one per instance) of the twin's series, for `tenant`. */
export function otlpTwinRequests(series: readonly SeriesSpec[], tenant: string): unknown[] {
  const byName = (name: string): SeriesSpec[] => series.filter((s) => s.labels['__name__'] === name);
  const instances = [...new Set(byName('synth_temperature_celsius').map((s) => s.labels['instance'] ?? ''))];
  return instances.map((instance) => {
    const of = (name: string): SeriesSpec[] => byName(name).filter((s) => s.labels['instance'] === instance);
    const metrics: unknown[] = [gaugeMetric(of('synth_temperature_celsius'))];
    if (otlpCounterInstances.includes(instance)) metrics.push(counterMetric(of('synth_requests_total')));
    const handlers = [...new Set(of('synth_http_request_duration_seconds_count').map((s) => s.labels['handler'] ?? ''))];
    if (handlers.length > 0) {
      metrics.push({
        name: 'synth.http.request.duration',
        unit: 's',
        histogram: { aggregationTemporality: 2, dataPoints: handlers.flatMap((h) => histogramPoints(series, instance, h)) },
      });
    }
    return { resourceMetrics: [resourceMetrics(tenant, instance, metrics)] };
  });
}

/** POSTs each OTLP/JSON request to `${ingestUrl}/v1/metrics`; throws on a non-2xx answer or a partial success with rejections. */
export async function sendOtlpJson(ingestUrl: string, bearer: string, requests: readonly unknown[]): Promise<void> {
  for (const body of requests) {
    const res = await fetch(`${ingestUrl}/v1/metrics`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: bearer },
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`OTLP export: ${res.status} ${text.slice(0, 500)}`);
    const partial = (JSON.parse(text === '' ? '{}' : text) as { partialSuccess?: { rejectedDataPoints?: string | number } }).partialSuccess;
    if (Number(partial?.rejectedDataPoints ?? 0) > 0) throw new Error(`OTLP export: partial success ${text.slice(0, 500)}`);
  }
}
