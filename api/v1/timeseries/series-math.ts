// Pure arithmetic of timeseries values computed from raw data points:
// counter increases with resets, histogram deltas, bucket quantiles. Kept
// free of I/O so every rule is unit-tested against numbers worked by hand.
import type { Operator } from './timeseries-codecs.ts';
import type { BucketPlan } from './bucket-plan.ts';

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary';

/** One stored data point, as the raw query returns it. */
export interface RawPoint {
  readonly stream: string;
  readonly ms: number;
  readonly temporality: string;
  readonly value: number;
  readonly count: number;
  readonly sum: number;
  readonly min: number | null;
  readonly max: number | null;
  readonly bucket_counts: readonly number[];
  readonly explicit_bounds: readonly number[];
  readonly exp_scale: number;
  readonly exp_zero_count: number;
  readonly exp_positive_offset: number;
  readonly exp_positive_bucket_counts: readonly number[];
  readonly exp_negative_offset: number;
  readonly exp_negative_bucket_counts: readonly number[];
  readonly quantiles: readonly number[];
  readonly quantile_values: readonly number[];
}

/** What one point adds over its predecessor in the same stream. */
interface Delta {
  readonly value: number;
  readonly count: number;
  readonly sum: number;
  readonly buckets: readonly number[];
  readonly pos: ReadonlyMap<number, number>;
  readonly neg: ReadonlyMap<number, number>;
  readonly zero: number;
}

const expMap = (offset: number, counts: readonly number[]): Map<number, number> => {
  const m = new Map<number, number>();
  counts.forEach((c, i) => {
    if (c > 0) m.set(offset + i, c);
  });
  return m;
};

const asDelta = (p: RawPoint): Delta => ({
  value: p.value,
  count: p.count,
  sum: p.sum,
  buckets: p.bucket_counts,
  pos: expMap(p.exp_positive_offset, p.exp_positive_bucket_counts),
  neg: expMap(p.exp_negative_offset, p.exp_negative_bucket_counts),
  zero: p.exp_zero_count,
});

const minusMap = (a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>): Map<number, number> => {
  const out = new Map<number, number>();
  for (const [k, v] of a) {
    const d = v - (b.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
};

const sameArray = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The increase a point carries. Delta temporality: the point itself.
 * Cumulative (and gauges asked for a rate): the difference to the previous
 * point of the stream; a drop means the counter restarted, so the new value
 * is the whole increase. The first point of a stream has no delta.
 */
export function deltaOf(type: MetricType, p: RawPoint, prev: RawPoint | undefined): Delta | undefined {
  if (p.temporality === 'delta') return asDelta(p);
  if (prev === undefined) return undefined;
  if (type === 'gauge' || type === 'sum') {
    const value = p.value >= prev.value ? p.value - prev.value : p.value;
    return { ...asDelta(p), value };
  }
  const comparable =
    type === 'histogram'
      ? sameArray(p.explicit_bounds, prev.explicit_bounds) && p.bucket_counts.length === prev.bucket_counts.length
      : type === 'exponential_histogram'
        ? p.exp_scale === prev.exp_scale
        : true;
  if (p.count < prev.count || !comparable) return asDelta(p);
  const prevDelta = asDelta(prev);
  return {
    value: p.value - prev.value,
    count: p.count - prev.count,
    sum: p.sum - prev.sum,
    buckets: p.bucket_counts.map((c, i) => c - (prev.bucket_counts[i] ?? 0)),
    pos: minusMap(asDelta(p).pos, prevDelta.pos),
    neg: minusMap(asDelta(p).neg, prevDelta.neg),
    zero: Math.max(0, p.exp_zero_count - prev.exp_zero_count),
  };
}

/**
 * Quantile from explicit buckets (Prometheus histogram_quantile rules):
 * bucket i holds (bounds[i-1], bounds[i]]; linear interpolation inside the
 * bucket; the first bucket starts at 0 when its bound is positive; a rank in
 * the overflow bucket answers the highest finite bound.
 */
export function histogramQuantile(q: number, bounds: readonly number[], counts: readonly number[]): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (const [i, c] of counts.entries()) {
    if (c > 0 && below + c >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1] ?? null;
      const upper = bounds[i] ?? 0;
      const lower = i === 0 ? (upper > 0 ? 0 : upper) : (bounds[i - 1] ?? 0);
      return lower + (upper - lower) * ((rank - below) / c);
    }
    below += c;
  }
  return bounds[bounds.length - 1] ?? null;
}

/**
 * Quantile of an exponential histogram at `scale`: positive bucket i holds
 * (base^i, base^(i+1)] with base = 2^(2^-scale), negative buckets mirror
 * them, the zero bucket counts as 0; linear interpolation inside a bucket.
 */
export function exponentialQuantile(q: number, scale: number, zero: number, pos: ReadonlyMap<number, number>, neg: ReadonlyMap<number, number>): number | null {
  const base = 2 ** (2 ** -scale);
  const ordered: [number, number, number][] = [
    ...[...neg.entries()].sort(([a], [b]) => b - a).map(([i, c]): [number, number, number] => [-(base ** (i + 1)), -(base ** i), c]),
    ...(zero > 0 ? [[0, 0, zero] as [number, number, number]] : []),
    ...[...pos.entries()].sort(([a], [b]) => a - b).map(([i, c]): [number, number, number] => [base ** i, base ** (i + 1), c]),
  ];
  const total = ordered.reduce((a, [, , c]) => a + c, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (const [lower, upper, c] of ordered) {
    if (below + c >= rank) return lower + (upper - lower) * ((rank - below) / c);
    below += c;
  }
  return ordered[ordered.length - 1]?.[1] ?? null;
}

/** Re-indexes exponential buckets from `from` to a coarser scale `to`. */
function downscale(m: ReadonlyMap<number, number>, from: number, to: number): Map<number, number> {
  const out = new Map<number, number>();
  const shift = from - to;
  for (const [i, c] of m) {
    const j = i >> shift;
    out.set(j, (out.get(j) ?? 0) + c);
  }
  return out;
}

class BucketAccumulator {
  points = 0;
  deltas = 0;
  increase = 0;
  count = 0;
  sum = 0;
  min: number | null = null;
  max: number | null = null;
  bounds: readonly number[] | undefined;
  buckets: number[] = [];
  expScale: number | undefined;
  zero = 0;
  pos = new Map<number, number>();
  neg = new Map<number, number>();
  quantileSum = 0;
  quantileN = 0;
  lastMs = -Infinity;
  lastAvg: number | null = null;
}

const percentile: Partial<Record<Operator, number>> = { p50: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };

/** The quantile an operator asks for, if it is a percentile. */
export const quantileOf = (op: Operator): number | undefined => percentile[op];

function addTo(acc: BucketAccumulator, type: MetricType, op: Operator, p: RawPoint, d: Delta | undefined): void {
  acc.points += 1;
  const q = quantileOf(op);
  if (type === 'summary' && q !== undefined) {
    const at = p.quantiles.findIndex((x) => Math.abs(x - q) < 1e-9);
    const v = p.quantile_values[at];
    if (at >= 0 && v !== undefined) {
      acc.quantileSum += v;
      acc.quantileN += 1;
    }
  }
  if (type === 'summary') {
    const lo = p.quantile_values[p.quantiles.indexOf(0)];
    const hi = p.quantile_values[p.quantiles.indexOf(1)];
    if (lo !== undefined) acc.min = acc.min === null ? lo : Math.min(acc.min, lo);
    if (hi !== undefined) acc.max = acc.max === null ? hi : Math.max(acc.max, hi);
  } else {
    if (p.min !== null) acc.min = acc.min === null ? p.min : Math.min(acc.min, p.min);
    if (p.max !== null) acc.max = acc.max === null ? p.max : Math.max(acc.max, p.max);
  }
  if (d === undefined) return;
  acc.deltas += 1;
  acc.increase += d.value;
  acc.count += d.count;
  acc.sum += d.sum;
  if (p.ms >= acc.lastMs) {
    acc.lastMs = p.ms;
    acc.lastAvg = d.count > 0 ? d.sum / d.count : null;
  }
  if (type === 'histogram') {
    acc.bounds ??= p.explicit_bounds;
    if (sameArray(acc.bounds, p.explicit_bounds))
      d.buckets.forEach((c, i) => {
        acc.buckets[i] = (acc.buckets[i] ?? 0) + c;
      });
  }
  if (type === 'exponential_histogram') {
    const scale = acc.expScale === undefined ? p.exp_scale : Math.min(acc.expScale, p.exp_scale);
    if (acc.expScale !== undefined && scale < acc.expScale) {
      acc.pos = downscale(acc.pos, acc.expScale, scale);
      acc.neg = downscale(acc.neg, acc.expScale, scale);
    }
    acc.expScale = scale;
    for (const [src, dst] of [
      [d.pos, acc.pos],
      [d.neg, acc.neg],
    ] as const) {
      for (const [i, c] of downscale(src, p.exp_scale, scale)) dst.set(i, (dst.get(i) ?? 0) + c);
    }
    acc.zero += d.zero;
  }
}

function finish(acc: BucketAccumulator, type: MetricType, op: Operator, stepSeconds: number): number | null {
  const counter = type === 'gauge' || type === 'sum';
  const hasDelta = acc.deltas > 0;
  switch (op) {
    case 'rate':
      return hasDelta ? (counter ? acc.increase : acc.count) / stepSeconds : null;
    case 'increase':
      return hasDelta ? (counter ? acc.increase : acc.count) : null;
    case 'count':
      return acc.count;
    case 'sum':
      return hasDelta ? acc.sum : null;
    case 'avg':
      return acc.count > 0 ? acc.sum / acc.count : null;
    case 'min':
      return acc.min;
    case 'max':
      return acc.max;
    case 'last':
      return acc.lastAvg;
    default: {
      const q = quantileOf(op) ?? 0.5;
      if (type === 'summary') return acc.quantileN > 0 ? acc.quantileSum / acc.quantileN : null;
      if (type === 'histogram') return acc.bounds === undefined ? null : histogramQuantile(q, acc.bounds, acc.buckets);
      return acc.expScale === undefined ? null : exponentialQuantile(q, acc.expScale, acc.zero, acc.pos, acc.neg);
    }
  }
}

/**
 * One value per bucket from the raw points of one series, sorted by stream
 * then time. Points before the first bucket only serve as predecessors.
 */
export function seriesValues(type: MetricType, op: Operator, points: readonly RawPoint[], plan: BucketPlan, startMs: number): (number | null)[] {
  const accs = Array.from({ length: plan.points }, () => new BucketAccumulator());
  let prev: RawPoint | undefined;
  for (const p of points) {
    if (prev !== undefined && prev.stream !== p.stream) prev = undefined;
    const d = deltaOf(type, p, prev);
    prev = p;
    const b = Math.floor((p.ms - plan.originMs) / plan.stepMs);
    const acc = accs[b];
    if (acc !== undefined && b >= 0 && p.ms >= startMs) addTo(acc, type, op, p, d);
  }
  return accs.map((acc) => finish(acc, type, op, plan.stepMs / 1000));
}
