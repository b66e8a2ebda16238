// The answer to a timeseries request: the window and its buckets, the series
// of every metric of every query object, and the normalised request echoed.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import { nsToMs, resolveRange } from '../../query/time-range.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { TenantScan } from '../../query/tenant-scan.ts';
import type { ScanCaller } from '../../query/tenant-scan.ts';
import { bucketTimes, planBuckets } from './bucket-plan.ts';
import type { TimeseriesRequest } from './timeseries-codecs.ts';
import { maxSeries, metricSeries } from './timeseries-queries.ts';
import type { SeriesData, Window } from './timeseries-queries.ts';
import { unitNames } from './ucum-units.ts';

const suggestedLabel = (name: string, labels: Readonly<Record<string, string>>): string => {
  const entries = Object.entries(labels);
  return entries.length === 0 ? name : `${name}{${entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
};

/** The window of a request: its range, rounded out to whole ms, and its buckets. */
function windowOf(deps: RouteDeps, scan: TenantScan, request: TimeseriesRequest): Result<Window & { startMs: number; endMs: number }, ApiError> {
  const range = resolveRange(request.startTime, request.endTime, deps.now());
  if (!range.ok) return range;
  const { startNs, endNs } = range.value;
  // The buckets span the range asked for; rows past the tenant's retention are not read (each statement reads through the scan's window).
  const visible = scan.window(range.value);
  if (!visible.ok) return visible;
  const startMs = nsToMs(startNs);
  const endMs = Number((endNs + 999_999n) / 1_000_000n);
  const buckets = planBuckets(startMs, endMs, request.interval);
  if (!buckets.ok) return buckets;
  return ok({ scan, startNs, endNs, buckets: buckets.value, startMs, endMs });
}

/**
 * API.md's `values` are numbers: a bucket without a value (no data for the
 * operator, a summary without the quantile, or one JSON cannot carry: NaN,
 * ±Inf) holds 0 and is listed in `emptyBuckets`, so that a measured 0 and no
 * value stay apart. `count` always has a value.
 */
function numbers(values: readonly (number | null)[]): { values: number[]; emptyBuckets: number[] } {
  const emptyBuckets: number[] = [];
  const out = values.map((v, i) => {
    if (v !== null && Number.isFinite(v)) return v;
    emptyBuckets.push(i);
    return 0;
  });
  return { values: out, emptyBuckets };
}

/** Every series a request asks for, in the timeseries result shape (DESIGN.md section 5). */
export async function timeseriesReport(deps: RouteDeps, caller: ScanCaller, request: TimeseriesRequest): Promise<Result<unknown, ApiError>> {
  const w = windowOf(deps, TenantScan.open(deps, caller, 'metrics'), request);
  if (!w.ok) return w;
  const all: { series: SeriesData; operator: string }[] = [];
  for (const q of request.queries) {
    const operator = q.operator ?? 'avg';
    for (const name of new Set(q.metrics)) {
      const found = await metricSeries(deps, w.value, name, q, operator);
      if (!found.ok) return found;
      for (const series of found.value) all.push({ series, operator });
      if (all.length > maxSeries) return fail(invalidRequest(`the request makes more than ${maxSeries} series: group by fewer attributes or filter`));
    }
  }
  return ok({
    times: bucketTimes(w.value.buckets),
    series: all.map(({ series }) => ({
      name: series.metric.name,
      suggested_label: suggestedLabel(series.metric.name, series.labels),
      unit: unitNames(series.metric.unit),
      labels: series.labels,
      length: series.values.length,
      ...numbers(series.values),
    })),
    metadata: all.map(({ series, operator }) => ({
      name: series.metric.name,
      labels: series.labels,
      type: series.metric.type,
      temporality: series.metric.temporality,
      monotonic: series.metric.monotonic,
      unit: series.metric.unit,
      description: series.metric.description,
      operator,
    })),
    query: {
      queries: request.queries.map((q) => ({ metrics: q.metrics, groupBy: q.groupBy ?? [], operator: q.operator ?? 'avg', attributes: q.attributes ?? {} })),
      startTime: w.value.startMs / 1000,
      endTime: w.value.endMs / 1000,
      interval: w.value.buckets.stepMs / 1000,
    },
  });
}
