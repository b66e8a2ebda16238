// An engine answer in Prometheus' JSON (web/api/v1 and util/jsonutil):
// samples as [seconds, "value"], native histograms as [seconds, {count, sum,
// buckets: [[boundary rule, "lower", "upper", "count"], …]}] with empty
// buckets left out, label pairs as one object.
import { allBuckets } from './engine/functions/histogram-math.ts';
import type { FloatHistogram, Labels } from './engine/sample-source.ts';
import type { FPoint, HPoint, QueryValue } from './engine/values.ts';
import { formatSampleValue, formatTimestamp } from './prom-float.ts';

type JsonSample = readonly [number, string];
type JsonHistogram = readonly [number, { count: string; sum: string; buckets: (readonly [number, string, string, string])[] }];

const metricOf = (labels: Labels): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of labels) out[name] = value;
  return out;
};

const sample = (p: FPoint): JsonSample => [formatTimestamp(p.t), formatSampleValue(p.f)];

/** A bucket's boundary rule: 0 (lower, upper], 1 [lower, upper), 3 [lower, upper] (the zero bucket). */
function boundaryRule(lower: number, upper: number, zeroThreshold: number): number {
  if (lower === -zeroThreshold && upper === zeroThreshold) return 3;
  return upper <= 0 && lower < 0 ? 1 : 0;
}

function histogramJson(t: number, h: FloatHistogram): JsonHistogram {
  const buckets = allBuckets(h)
    .filter((b) => b.count !== 0)
    .map(
      (b) =>
        [
          h.schema === -53 ? 0 : boundaryRule(b.lower, b.upper, h.zeroThreshold),
          formatSampleValue(b.lower),
          formatSampleValue(b.upper),
          formatSampleValue(b.count),
        ] as const,
    );
  return [formatTimestamp(t), { count: formatSampleValue(h.count), sum: formatSampleValue(h.sum), buckets }];
}

const histogramPoint = (p: HPoint): JsonHistogram => histogramJson(p.t, p.h);

/** The `data` of a query answer. */
export function queryData(value: QueryValue): unknown {
  switch (value.resultType) {
    case 'scalar':
      return { resultType: 'scalar', result: sample(value.result) };
    case 'string':
      return { resultType: 'string', result: [formatTimestamp(value.result.t), value.result.s] };
    case 'vector':
      return {
        resultType: 'vector',
        result: value.result.map((e) =>
          e.h === undefined ? { metric: metricOf(e.labels), value: sample(e) } : { metric: metricOf(e.labels), histogram: histogramJson(e.t, e.h) },
        ),
      };
    case 'matrix':
      return {
        resultType: 'matrix',
        result: value.result.map((s) => ({
          metric: metricOf(s.labels),
          ...(s.floats.length > 0 ? { values: s.floats.map(sample) } : {}),
          ...(s.histograms.length > 0 ? { histograms: s.histograms.map(histogramPoint) } : {}),
        })),
      };
  }
}
