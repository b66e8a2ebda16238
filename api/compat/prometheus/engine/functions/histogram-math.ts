// Native-histogram arithmetic as Prometheus' FloatHistogram does it: adding
// and subtracting across schemas (the coarser wins) and zero thresholds (the
// wider wins), custom-bound histograms reconciled to their common bounds,
// counter-reset detection, and the buckets with their bounds in order.
// Histograms are built here with empty buckets dropped (Prometheus' Compact(0));
// the API prints only populated buckets, so layouts need not match bit for bit.
import { fail, ok } from '../../../../../src/result.ts';
import type { Result } from '../../../../../src/result.ts';
import type { BucketSpan, FloatHistogram } from '../sample-source.ts';
import { kahanInc } from './kahan-sum.ts';

/** Prometheus' schema number of histograms with custom bucket bounds. */
export const customBucketsSchema = -53;

type Hint = FloatHistogram['counterResetHint'];

/** A histogram under construction: buckets by index. */
interface Draft {
  hint: Hint;
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  count: number;
  sum: number;
  pos: Map<number, number>;
  neg: Map<number, number>;
  custom: readonly number[] | undefined;
}

/** One bucket with its bounds, as the bucket iterators yield it. */
export interface HistogramBucket {
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
}

/** Why two histograms cannot be combined: one has custom bounds, the other exponential buckets. */
export const incompatibleSchema = 'incompatible_schema';

/** Whether `h` uses custom bucket bounds (schema -53). */
export const usesCustomBuckets = (h: FloatHistogram): boolean => h.schema === customBucketsSchema;

function indexed(spans: readonly BucketSpan[], buckets: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  let idx = 0;
  let k = 0;
  for (const span of spans) {
    idx += span.offset;
    for (let j = 0; j < span.length; j++) out.set(idx++, buckets[k++] ?? 0);
  }
  return out;
}

function draftOf(h: FloatHistogram): Draft {
  return {
    hint: h.counterResetHint,
    schema: h.schema,
    zeroThreshold: h.zeroThreshold,
    zeroCount: h.zeroCount,
    count: h.count,
    sum: h.sum,
    pos: indexed(h.positiveSpans, h.positiveBuckets),
    neg: indexed(h.negativeSpans, h.negativeBuckets),
    custom: h.customValues,
  };
}

function spansOf(map: ReadonlyMap<number, number>): { spans: BucketSpan[]; buckets: number[] } {
  const keys = [...map.keys()].filter((k) => map.get(k) !== 0).sort((a, b) => a - b);
  const spans: { offset: number; length: number }[] = [];
  const buckets: number[] = [];
  let next = 0;
  for (const k of keys) {
    const last = spans[spans.length - 1];
    if (last !== undefined && k === next) last.length++;
    else spans.push({ offset: spans.length === 0 ? k : k - next, length: 1 });
    buckets.push(map.get(k) ?? 0);
    next = k + 1;
  }
  return { spans, buckets };
}

function finish(d: Draft): FloatHistogram {
  const pos = spansOf(d.pos);
  const neg = spansOf(d.neg);
  const base = {
    counterResetHint: d.hint,
    schema: d.schema,
    zeroThreshold: d.zeroThreshold,
    zeroCount: d.zeroCount,
    count: d.count,
    sum: d.sum,
    positiveSpans: pos.spans,
    positiveBuckets: pos.buckets,
    negativeSpans: neg.spans,
    negativeBuckets: neg.buckets,
  };
  return d.custom === undefined ? base : { ...base, customValues: d.custom };
}

/** The absolute upper bound of exponential bucket `idx` at `schema`. */
export function exponentialBound(idx: number, schema: number): number {
  return Math.pow(2, idx * Math.pow(2, -schema));
}

function customUpper(custom: readonly number[], idx: number): number {
  return idx < custom.length ? (custom[idx] ?? Infinity) : Infinity;
}

function customLower(custom: readonly number[], idx: number): number {
  return idx === 0 ? -Infinity : (custom[idx - 1] ?? Infinity);
}

function reduced(map: ReadonlyMap<number, number>, from: number, to: number): Map<number, number> {
  if (from === to) return new Map(map);
  const out = new Map<number, number>();
  for (const [i, c] of map) {
    const t = ((i - 1) >> (from - to)) + 1;
    out.set(t, (out.get(t) ?? 0) + c);
  }
  return out;
}

function sortedEntries(map: ReadonlyMap<number, number>): [number, number][] {
  return [...map.entries()].sort((a, b) => a[0] - b[0]);
}

/** The zero count `d` has with a zero bucket at least `larger` wide, and the threshold it ends at (never inside a populated bucket). */
function zeroCountForLargerThreshold(d: Draft, larger: number): readonly [number, number] {
  if (larger === d.zeroThreshold) return [d.zeroCount, larger];
  let threshold = larger;
  for (;;) {
    let zero = d.zeroCount;
    let comp = 0;
    let redo = false;
    for (const [idx, c] of sortedEntries(d.pos)) {
      const lower = exponentialBound(idx - 1, d.schema);
      const upper = exponentialBound(idx, d.schema);
      if (lower >= threshold) break;
      [zero, comp] = kahanInc(c, zero, comp);
      if (upper > threshold) {
        if (c !== 0) threshold = upper;
        break;
      }
    }
    for (const [idx, c] of sortedEntries(d.neg)) {
      const lower = exponentialBound(idx - 1, d.schema);
      const upper = exponentialBound(idx, d.schema);
      if (lower >= threshold) break;
      [zero, comp] = kahanInc(c, zero, comp);
      if (upper > threshold) {
        if (c !== 0) {
          threshold = upper;
          redo = true;
        }
        break;
      }
    }
    if (!redo) return [zero + comp, threshold];
  }
}

function widenZeroBucket(d: Draft, larger: number): void {
  const [zero, threshold] = zeroCountForLargerThreshold(d, larger);
  d.zeroCount = zero;
  d.zeroThreshold = threshold;
  for (const map of [d.pos, d.neg]) {
    for (const idx of [...map.keys()]) if (exponentialBound(idx - 1, d.schema) < threshold) map.delete(idx);
  }
}

/** Brings `a` (changed in place) and a copy of `b` to one schema and one zero bucket. */
function reconcile(a: Draft, b: Draft): Draft {
  const other: Draft = { ...b, pos: new Map(b.pos), neg: new Map(b.neg) };
  if (other.schema < a.schema) {
    a.pos = reduced(a.pos, a.schema, other.schema);
    a.neg = reduced(a.neg, a.schema, other.schema);
    a.schema = other.schema;
  } else if (other.schema > a.schema) {
    other.pos = reduced(other.pos, other.schema, a.schema);
    other.neg = reduced(other.neg, other.schema, a.schema);
    other.schema = a.schema;
  }
  while (other.zeroThreshold !== a.zeroThreshold) {
    if (a.zeroThreshold > other.zeroThreshold) widenZeroBucket(other, a.zeroThreshold);
    if (other.zeroThreshold > a.zeroThreshold) widenZeroBucket(a, other.zeroThreshold);
  }
  return other;
}

/** The custom bounds both lists have. */
function intersectBounds(a: readonly number[], b: readonly number[]): number[] {
  const set = new Set(b);
  return a.filter((x) => set.has(x));
}

/** Custom buckets moved onto `bounds` (a subset of their own): each into the bucket holding its upper bound. */
function remapCustom(map: ReadonlyMap<number, number>, own: readonly number[], bounds: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const [idx, c] of map) {
    const upper = customUpper(own, idx);
    let t = bounds.findIndex((x) => x >= upper);
    if (t < 0) t = bounds.length;
    out.set(t, (out.get(t) ?? 0) + c);
  }
  return out;
}

function sameBounds(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function combinedHint(a: Hint, b: Hint): Hint {
  if (a === b || a === 'gauge') return a;
  if (b === 'gauge') return 'gauge';
  return 'unknown';
}

/** What combining two histograms gives: the histogram, and whether custom bucket bounds had to be reconciled. */
export interface SummedHistogram {
  readonly h: FloatHistogram;
  readonly boundsReconciled: boolean;
}

/** What combining two histograms answers: the sum, or why there is none. */
export type HistogramSum = Result<SummedHistogram, typeof incompatibleSchema>;

/** `a + b` (or `a - b` when `subtract`), as FloatHistogram.Add/Sub. */
export function addHistograms(a: FloatHistogram, b: FloatHistogram, subtract = false): HistogramSum {
  if (usesCustomBuckets(a) !== usesCustomBuckets(b)) return fail(incompatibleSchema);
  const d = draftOf(a);
  const o = draftOf(b);
  const sign = subtract ? -1 : 1;
  d.hint = combinedHint(a.counterResetHint, b.counterResetHint);
  let boundsReconciled = false;
  let other = o;
  if (usesCustomBuckets(a)) {
    if (!sameBounds(a.customValues, b.customValues)) {
      boundsReconciled = true;
      const bounds = intersectBounds(a.customValues ?? [], b.customValues ?? []);
      d.pos = remapCustom(d.pos, a.customValues ?? [], bounds);
      other = { ...o, pos: remapCustom(o.pos, b.customValues ?? [], bounds) };
      d.custom = bounds;
    }
  } else {
    other = reconcile(d, o);
    d.zeroCount += sign * other.zeroCount;
  }
  d.count += sign * other.count;
  d.sum += sign * other.sum;
  for (const [side, from] of [
    [d.pos, other.pos],
    [d.neg, other.neg],
  ] as const) {
    for (const [idx, c] of from) side.set(idx, (side.get(idx) ?? 0) + sign * c);
  }
  return ok({ h: finish(d), boundsReconciled });
}

/** `h` with every count and the sum multiplied by `factor` (a negative factor makes it a gauge). */
export function scaleHistogram(h: FloatHistogram, factor: number): FloatHistogram {
  const times = (xs: readonly number[]): number[] => xs.map((x) => x * factor);
  return {
    ...h,
    zeroCount: h.zeroCount * factor,
    count: h.count * factor,
    sum: h.sum * factor,
    positiveBuckets: times(h.positiveBuckets),
    negativeBuckets: times(h.negativeBuckets),
    counterResetHint: factor < 0 ? 'gauge' : h.counterResetHint,
  };
}

/** `h` divided by `divisor`; dividing by zero drops the buckets, as Prometheus does. */
export function divideHistogram(h: FloatHistogram, divisor: number): FloatHistogram {
  if (divisor === 0) {
    return {
      ...h,
      zeroCount: h.zeroCount / 0,
      count: h.count / 0,
      sum: h.sum / 0,
      positiveSpans: [],
      positiveBuckets: [],
      negativeSpans: [],
      negativeBuckets: [],
    };
  }
  const over = (xs: readonly number[]): number[] => xs.map((x) => x / divisor);
  return {
    ...h,
    zeroCount: h.zeroCount / divisor,
    count: h.count / divisor,
    sum: h.sum / divisor,
    positiveBuckets: over(h.positiveBuckets),
    negativeBuckets: over(h.negativeBuckets),
    counterResetHint: divisor < 0 ? 'gauge' : h.counterResetHint,
  };
}

/** `h` with its buckets merged down to the coarser `schema` (no change when it is not coarser, or for custom buckets). */
export function reduceSchema(h: FloatHistogram, schema: number): FloatHistogram {
  if (usesCustomBuckets(h) || schema >= h.schema) return h;
  const d = draftOf(h);
  d.pos = reduced(d.pos, h.schema, schema);
  d.neg = reduced(d.neg, h.schema, schema);
  d.schema = schema;
  return finish(d);
}

/** An empty histogram with `like`'s schema and custom bounds (the zero point of a counter). */
export function emptyHistogramLike(like: FloatHistogram): FloatHistogram {
  const base = {
    counterResetHint: 'unknown' as const,
    schema: like.schema,
    zeroThreshold: 0,
    zeroCount: 0,
    count: 0,
    sum: 0,
    positiveSpans: [],
    positiveBuckets: [],
    negativeSpans: [],
    negativeBuckets: [],
  };
  return like.customValues === undefined ? base : { ...base, customValues: like.customValues };
}

/** `h` with a new counter-reset hint. */
export const withHint = (h: FloatHistogram, hint: Hint): FloatHistogram => ({ ...h, counterResetHint: hint });

/** `h` with its empty buckets dropped. */
export const compactHistogram = (h: FloatHistogram): FloatHistogram => finish(draftOf(h));

/** Whether any count or the sum of `h` is infinite. */
export function hasOverflow(h: FloatHistogram): boolean {
  const inf = (x: number): boolean => x === Infinity || x === -Infinity;
  return inf(h.zeroCount) || inf(h.count) || inf(h.sum) || h.positiveBuckets.some(inf) || h.negativeBuckets.some(inf);
}

function bucketsDecreased(cur: ReadonlyMap<number, number>, prev: ReadonlyMap<number, number>): boolean {
  for (const [idx, c] of prev) {
    if (c === 0) continue;
    const now = cur.get(idx);
    if (now === undefined || now < c) return true;
  }
  return false;
}

/** Whether `h` follows a counter reset after `previous`, as FloatHistogram.DetectReset (the hint first, then the buckets). */
export function detectReset(h: FloatHistogram, previous: FloatHistogram): boolean {
  if (h.counterResetHint === 'reset') return true;
  if (h.counterResetHint === 'not_reset') return false;
  if (h.count < previous.count) return true;
  if (usesCustomBuckets(h) !== usesCustomBuckets(previous)) return true;
  if (usesCustomBuckets(h)) {
    const bounds = sameBounds(h.customValues, previous.customValues)
      ? (h.customValues ?? [])
      : intersectBounds(h.customValues ?? [], previous.customValues ?? []);
    const cur = remapCustom(indexed(h.positiveSpans, h.positiveBuckets), h.customValues ?? [], bounds);
    const prev = remapCustom(indexed(previous.positiveSpans, previous.positiveBuckets), previous.customValues ?? [], bounds);
    return bucketsDecreased(cur, prev);
  }
  if (h.schema > previous.schema) return true;
  if (h.zeroThreshold < previous.zeroThreshold) return true;
  const prev = draftOf(previous);
  const [prevZero, threshold] = zeroCountForLargerThreshold(prev, h.zeroThreshold);
  if (threshold !== h.zeroThreshold) return true;
  if (h.zeroCount < prevZero) return true;
  const cur = draftOf(h);
  const above = (map: ReadonlyMap<number, number>, schema: number): Map<number, number> => {
    const out = reduced(map, schema, h.schema);
    for (const idx of [...out.keys()]) if (exponentialBound(idx, h.schema) <= h.zeroThreshold) out.delete(idx);
    return out;
  };
  return (
    bucketsDecreased(above(cur.pos, h.schema), above(prev.pos, previous.schema)) || bucketsDecreased(above(cur.neg, h.schema), above(prev.neg, previous.schema))
  );
}

/** Whether `a` and `b` hold the same data, bit for bit (FloatHistogram.Equals; empty buckets count as absent). */
export function histogramsEqual(a: FloatHistogram, b: FloatHistogram): boolean {
  const same = (x: number, y: number): boolean => Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y));
  if (a.schema !== b.schema || !same(a.count, b.count) || !same(a.sum, b.sum)) return false;
  if (usesCustomBuckets(a) && !sameBounds(a.customValues, b.customValues)) return false;
  if (a.zeroThreshold !== b.zeroThreshold || !same(a.zeroCount, b.zeroCount)) return false;
  const sameMap = (x: ReadonlyMap<number, number>, y: ReadonlyMap<number, number>): boolean => {
    const xs = sortedEntries(x);
    const ys = sortedEntries(y);
    return (
      xs.length === ys.length &&
      xs.every(([i, c], k) => {
        const y = ys[k];
        return y !== undefined && y[0] === i && same(c, y[1]);
      })
    );
  };
  return (
    sameMap(indexed(a.positiveSpans, a.positiveBuckets), indexed(b.positiveSpans, b.positiveBuckets)) &&
    sameMap(indexed(a.negativeSpans, a.negativeBuckets), indexed(b.negativeSpans, b.negativeBuckets))
  );
}

/**
 * Every bucket of `h` from the lowest to the highest (negative, zero, positive),
 * or the other way with `reverse`. Buckets overlapping the zero bucket are cut
 * at the zero threshold; the zero bucket appears only when populated.
 */
export function allBuckets(h: FloatHistogram, reverse = false): HistogramBucket[] {
  const out: HistogramBucket[] = [];
  if (usesCustomBuckets(h)) {
    const custom = h.customValues ?? [];
    for (const [idx, count] of sortedEntries(indexed(h.positiveSpans, h.positiveBuckets))) {
      out.push({ lower: customLower(custom, idx), upper: customUpper(custom, idx), count });
    }
    return reverse ? out.reverse() : out;
  }
  const z = h.zeroThreshold;
  const clip = (b: HistogramBucket): HistogramBucket => {
    if (b.upper < 0 && b.upper > -z) return { ...b, upper: -z };
    if (b.lower > 0 && b.lower < z) return { ...b, lower: z };
    return b;
  };
  const negative = sortedEntries(indexed(h.negativeSpans, h.negativeBuckets))
    .reverse()
    .map(([idx, count]) => clip({ lower: -exponentialBound(idx, h.schema), upper: -exponentialBound(idx - 1, h.schema), count }));
  const positive = sortedEntries(indexed(h.positiveSpans, h.positiveBuckets)).map(([idx, count]) =>
    clip({ lower: exponentialBound(idx - 1, h.schema), upper: exponentialBound(idx, h.schema), count }),
  );
  out.push(...negative);
  if (h.zeroCount > 0) out.push({ lower: -z, upper: z, count: h.zeroCount });
  out.push(...positive);
  return reverse ? out.reverse() : out;
}

/** Whether `h` has any negative or any positive bucket (counting empty ones, as Prometheus' slices do). */
export const hasNegativeBuckets = (h: FloatHistogram): boolean => h.negativeBuckets.length > 0;
export const hasPositiveBuckets = (h: FloatHistogram): boolean => h.positiveBuckets.length > 0;

/** The sum of `hs` (at least one), or why there is none. Plain summation: bucket counts are integers in practice, where compensation changes nothing. */
export function sumHistograms(hs: readonly FloatHistogram[]): HistogramSum {
  const [first, ...rest] = hs;
  if (first === undefined) throw new Error('no histogram to sum');
  let acc: HistogramSum = ok({ h: first, boundsReconciled: false });
  for (const h of rest) {
    if (!acc.ok) return acc;
    const next = addHistograms(acc.value.h, h);
    acc = next.ok ? ok({ ...next.value, boundsReconciled: acc.value.boundsReconciled || next.value.boundsReconciled }) : next;
  }
  return acc;
}
