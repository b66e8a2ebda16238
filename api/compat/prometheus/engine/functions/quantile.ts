// Quantiles and fractions as Prometheus estimates them: of a list of values
// (quantile_over_time, the quantile aggregation), of classic `le` buckets
// (sorted, coalesced, made monotonic, the +Inf bucket required) and of native
// histograms (exponential interpolation inside exponential buckets, linear in
// the zero bucket and custom buckets).
import type { FloatHistogram } from '../sample-source.ts';
import { allBuckets, hasNegativeBuckets, hasPositiveBuckets, usesCustomBuckets } from './histogram-math.ts';
import type { HistogramBucket } from './histogram-math.ts';

/** The q-quantile of `values` with linear interpolation between ranks; NaN for none, ∓Inf for q outside [0, 1]. */
export function quantileOf(q: number, values: readonly number[]): number {
  if (values.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  // NaN sorts first, as in Prometheus' value heap.
  const sorted = [...values].sort((a, b) => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : Number.isNaN(b) ? 1 : a - b));
  const n = sorted.length;
  const rank = q * (n - 1);
  const lower = Math.max(0, Math.floor(rank));
  const upper = Math.min(n - 1, lower + 1);
  const weight = rank - Math.floor(rank);
  // On a rank exactly: that value, not an interpolation (-Inf × 1 + x × 0 would be NaN).
  if (weight === 0) return sorted[lower] ?? NaN;
  return (sorted[lower] ?? NaN) * (1 - weight) + (sorted[upper] ?? NaN) * weight;
}

/** One classic bucket: its `le` and cumulative count. */
export interface ClassicBucket {
  readonly upperBound: number;
  count: number;
}

/** The relative difference below which adjacent bucket counts are taken as equal (float noise). */
const smallDeltaTolerance = 1e-12;

/** The smallest positive normal float64. */
const minNormal = 2 ** -1022;

function almostEqual(a: number, b: number, epsilon: number): boolean {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  if (a === b) return true;
  const absSum = Math.abs(a) + Math.abs(b);
  const diff = Math.abs(a - b);
  if (a === 0 || b === 0 || absSum < minNormal) return diff < epsilon * minNormal;
  return diff / Math.min(absSum, Number.MAX_VALUE) < epsilon;
}

function sortedCoalesced(buckets: readonly ClassicBucket[]): ClassicBucket[] {
  const sorted = [...buckets].map((b) => ({ ...b })).sort((a, b) => a.upperBound - b.upperBound);
  const out: ClassicBucket[] = [];
  for (const b of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last.upperBound === b.upperBound) last.count += b.count;
    else out.push(b);
  }
  return out;
}

/** What making classic buckets monotonic fixed: the lowest and highest bound it raised and the largest decrease removed. */
export interface MonotonicityRepair {
  readonly minBucket: number;
  readonly maxBucket: number;
  readonly maxDiff: number;
}

/** Removes decreases between adjacent buckets (and float noise); what a real decrease fixed, if one was. */
function ensureMonotonic(buckets: ClassicBucket[]): MonotonicityRepair | undefined {
  let forced = false;
  let minBucket = Infinity;
  let maxBucket = -Infinity;
  let maxDiff = 0;
  let prev = buckets[0]?.count ?? 0;
  for (let i = 1; i < buckets.length; i++) {
    const b = buckets[i];
    if (b === undefined) continue;
    const curr = b.count;
    if (curr === prev) continue;
    if (almostEqual(prev, curr, smallDeltaTolerance)) {
      b.count = prev;
      continue;
    }
    if (curr < prev) {
      b.count = prev;
      forced = true;
      minBucket = Math.min(minBucket, b.upperBound);
      maxBucket = Math.max(maxBucket, b.upperBound);
      maxDiff = Math.max(maxDiff, prev - curr);
      continue;
    }
    prev = curr;
  }
  return forced ? { minBucket, maxBucket, maxDiff } : undefined;
}

/** histogram_quantile over classic buckets, and what forcing monotonicity fixed, if it had to. */
export function bucketQuantile(q: number, input: readonly ClassicBucket[]): { readonly value: number; readonly forcedMonotonic?: MonotonicityRepair } {
  if (Number.isNaN(q)) return { value: NaN };
  if (q < 0) return { value: -Infinity };
  if (q > 1) return { value: Infinity };
  const sorted = [...input].sort((a, b) => a.upperBound - b.upperBound);
  if (sorted[sorted.length - 1]?.upperBound !== Infinity) return { value: NaN };
  const buckets = sortedCoalesced(sorted);
  const repair = ensureMonotonic(buckets);
  const forcedMonotonic = repair === undefined ? {} : { forcedMonotonic: repair };
  if (buckets.length < 2) return { value: NaN, ...forcedMonotonic };
  const observations = buckets[buckets.length - 1]?.count ?? 0;
  if (observations === 0) return { value: NaN, ...forcedMonotonic };
  let rank = q * observations;
  let b = buckets.length - 1;
  for (let i = 0; i < buckets.length - 1; i++) {
    if ((buckets[i]?.count ?? 0) >= rank) {
      b = i;
      break;
    }
  }
  const at = (i: number): ClassicBucket => buckets[i] ?? { upperBound: NaN, count: NaN };
  if (b === buckets.length - 1) return { value: at(buckets.length - 2).upperBound, ...forcedMonotonic };
  if (b === 0 && at(0).upperBound <= 0) return { value: at(0).upperBound, ...forcedMonotonic };
  let bucketStart = 0;
  const bucketEnd = at(b).upperBound;
  let count = at(b).count;
  if (b > 0) {
    bucketStart = at(b - 1).upperBound;
    count -= at(b - 1).count;
    rank -= at(b - 1).count;
  }
  return { value: bucketStart + (bucketEnd - bucketStart) * (rank / count), ...forcedMonotonic };
}

/** histogram_quantile over a native histogram. */
export function histogramQuantile(q: number, h: FloatHistogram): number {
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  if (h.count === 0 || Number.isNaN(q)) return NaN;
  const forward = Number.isNaN(h.sum) || q < 0.5;
  const buckets = allBuckets(h, !forward);
  let rank = forward ? q * h.count : (1 - q) * h.count;
  let count = 0;
  let bucket: HistogramBucket = { lower: 0, upper: 0, count: 0 };
  let k = 0;
  for (; k < buckets.length; k++) {
    bucket = buckets[k] ?? bucket;
    if (bucket.count === 0) continue;
    count += bucket.count;
    if (count >= rank) break;
  }
  const custom = usesCustomBuckets(h);
  if (!custom && bucket.lower < 0 && bucket.upper > 0) {
    if (!hasNegativeBuckets(h) && hasPositiveBuckets(h)) bucket = { ...bucket, lower: 0 };
    else if (!hasPositiveBuckets(h) && hasNegativeBuckets(h)) bucket = { ...bucket, upper: 0 };
  } else if (custom) {
    if (bucket.lower === -Infinity) {
      if (bucket.upper <= 0) return bucket.upper;
      bucket = { ...bucket, lower: 0 };
    } else if (bucket.upper === Infinity) {
      return bucket.lower;
    }
  }
  if (count > h.count) count = h.count;
  if (count < rank) return Number.isNaN(h.sum) ? NaN : bucket.upper;
  if (forward) rank -= count - bucket.count;
  else rank = count - rank;
  const fraction = rank / bucket.count;
  if (custom || (bucket.lower <= 0 && bucket.upper >= 0)) return bucket.lower + (bucket.upper - bucket.lower) * fraction;
  const logLower = Math.log2(Math.abs(bucket.lower));
  const logUpper = Math.log2(Math.abs(bucket.upper));
  if (bucket.lower > 0) return Math.pow(2, logLower + (logUpper - logLower) * fraction);
  return -Math.pow(2, logUpper + (logLower - logUpper) * (1 - fraction));
}

/** The fraction of bucket `b` below `v`: linear, or on a log scale for exponential buckets (Bucket.FractionBelow). */
function fractionBelow(b: HistogramBucket, v: number, linear: boolean): number {
  if (linear) return (v - b.lower) / (b.upper - b.lower);
  const logV = Math.log2(Math.abs(v));
  const logLower = Math.log2(Math.abs(b.lower));
  const logUpper = Math.log2(Math.abs(b.upper));
  if (v > 0) return (logV - logLower) / (logUpper - logLower);
  return 1 - (logV - logUpper) / (logLower - logUpper);
}

/** histogram_fraction over a native histogram. */
export function histogramFraction(lower: number, upper: number, h: FloatHistogram): number {
  if (h.count === 0 || Number.isNaN(lower) || Number.isNaN(upper)) return NaN;
  if (lower >= upper) return 0;
  let count = 0;
  let rank = 0;
  let lowerRank = 0;
  let upperRank = 0;
  let lowerSet = false;
  let upperSet = false;
  const custom = usesCustomBuckets(h);
  for (const original of allBuckets(h)) {
    let b = original;
    count += b.count;
    let zeroBucket = false;
    if (b.lower <= 0 && b.upper >= 0) {
      zeroBucket = true;
      if (!hasNegativeBuckets(h) && hasPositiveBuckets(h)) b = { ...b, lower: 0 };
      else if (!hasPositiveBuckets(h) && hasNegativeBuckets(h)) b = { ...b, upper: 0 };
    }
    const interpolate = (v: number): number => {
      if (custom || zeroBucket) return b.lower === -Infinity ? b.count : rank + b.count * fractionBelow(b, v, true);
      return rank + b.count * fractionBelow(b, v, false);
    };
    if (!lowerSet && b.lower >= lower) {
      lowerRank = rank;
      lowerSet = true;
    }
    if (!upperSet && b.lower >= upper) {
      upperRank = rank;
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    if (!lowerSet && b.lower < lower && b.upper > lower) {
      lowerRank = interpolate(lower);
      lowerSet = true;
    }
    if (!upperSet && b.lower < upper && b.upper > upper) {
      upperRank = interpolate(upper);
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    rank += b.count;
  }
  if (!Number.isNaN(h.sum)) count = h.count;
  else count = allBuckets(h).reduce((s, b) => s + b.count, 0);
  if (!lowerSet || lowerRank > count) lowerRank = count;
  if (!upperSet || upperRank > count) upperRank = count;
  return (upperRank - lowerRank) / h.count;
}

/** histogram_fraction over classic buckets. */
export function bucketFraction(lower: number, upper: number, input: readonly ClassicBucket[]): number {
  const sorted = [...input].sort((a, b) => a.upperBound - b.upperBound);
  if (sorted[sorted.length - 1]?.upperBound !== Infinity) return NaN;
  const buckets = sortedCoalesced(sorted);
  const count = buckets[buckets.length - 1]?.count ?? 0;
  if (count === 0 || Number.isNaN(lower) || Number.isNaN(upper)) return NaN;
  if (lower >= upper) return 0;
  let rank = 0;
  let lowerRank = 0;
  let upperRank = 0;
  let lowerSet = false;
  let upperSet = false;
  let lowerBound = (buckets[0]?.upperBound ?? 0) <= 0 ? -Infinity : 0;
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i];
    if (b === undefined) continue;
    if (i > 0) lowerBound = buckets[i - 1]?.upperBound ?? lowerBound;
    const upperBound = b.upperBound;
    const lb = lowerBound;
    const interpolate = (v: number): number => (lb === -Infinity ? b.count : rank + ((b.count - rank) * (v - lb)) / (upperBound - lb));
    if (!lowerSet && lowerBound >= lower) {
      lowerRank = rank;
      lowerSet = true;
    }
    if (!upperSet && lowerBound >= upper) {
      upperRank = rank;
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    if (!lowerSet && lowerBound < lower && upperBound > lower) {
      lowerRank = interpolate(lower);
      lowerSet = true;
    }
    if (!upperSet && lowerBound < upper && upperBound > upper) {
      upperRank = interpolate(upper);
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    rank = b.count;
  }
  if (!lowerSet || lowerRank > count) lowerRank = count;
  if (!upperSet || upperRank > count) upperRank = count;
  return (upperRank - lowerRank) / count;
}
