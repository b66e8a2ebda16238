// The histogram functions: histogram_quantile and histogram_fraction over
// classic `le` buckets (grouped by their other labels) and native histograms,
// and the native-only histogram_count, _sum, _avg, _stddev and _stdvar.
import { ok } from '../../../../../src/result.ts';
import type { FloatHistogram, Labels } from '../sample-source.ts';
import type { Vector, VectorElement } from '../values.ts';
import type { ArgAnnotation, FunctionDef, MonotonicityFix } from './function-types.ts';
import { badBucketLabelWarning, forcedMonotonicityInfo, invalidQuantileWarning, mixedClassicNativeWarning } from './annotations.ts';
import { allBuckets, usesCustomBuckets } from './histogram-math.ts';
import { kahanInc } from './kahan-sum.ts';
import { labelValue, labelsKey, withoutLabels } from './label-set.ts';
import { bucketFraction, bucketQuantile, histogramFraction, histogramQuantile } from './quantile.ts';
import type { ClassicBucket } from './quantile.ts';
import { answer, scalarArg, vectorArg } from './step-args.ts';

/** Go's strconv.ParseFloat for what `le` labels hold: decimal floats, Inf/Infinity and NaN with an optional sign. */
export function parseGoFloat(text: string): number | undefined {
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return NaN;
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return undefined;
}

interface ClassicGroup {
  readonly labels: Labels;
  readonly buckets: ClassicBucket[];
}

/** A bucket series' upper bound, its labels without `le` and their key. */
interface BucketOf {
  readonly upperBound: number | undefined;
  readonly labels: Labels;
  readonly key: string;
}

/** Per labels array (never changed in place; the same array comes back at every step of a range query). */
const buckets = new WeakMap<Labels, BucketOf>();

function bucketOf(series: Labels): BucketOf {
  const known = buckets.get(series);
  if (known !== undefined) return known;
  const labels = withoutLabels(series, ['le']);
  const made = { upperBound: parseGoFloat(labelValue(series, 'le')), labels, key: labelsKey(labels) };
  buckets.set(series, made);
  return made;
}

/**
 * One step's input split as Prometheus' resetHistograms does: classic groups
 * by labels without `le`, native samples not shadowed by a group. Its
 * warnings stand at the vector argument `arg` and name the metric only under
 * delayed name removal (otherwise the name is dropped from the answer anyway).
 */
function splitHistograms(
  input: Vector,
  arg: number,
  named: boolean,
): { natives: VectorElement[]; groups: Map<string, ClassicGroup>; annotations: ArgAnnotation[] } {
  const groups = new Map<string, ClassicGroup>();
  const natives: VectorElement[] = [];
  const annotations: ArgAnnotation[] = [];
  const nameOf = (labels: Labels): string => (named ? labelValue(labels, '__name__') : '');
  for (const el of input) {
    if (el.h !== undefined) {
      natives.push(el);
      continue;
    }
    const bucket = bucketOf(el.labels);
    if (bucket.upperBound === undefined) {
      annotations.push({ text: badBucketLabelWarning(nameOf(el.labels), labelValue(el.labels, 'le')), arg });
      continue;
    }
    const { upperBound, labels, key } = bucket;
    const group = groups.get(key) ?? { labels, buckets: [] };
    groups.set(key, group);
    group.buckets.push({ upperBound, count: el.f });
  }
  const kept = natives.filter((el) => {
    const key = labelsKey(el.labels);
    if (!groups.has(key)) return true;
    annotations.push({ text: mixedClassicNativeWarning(nameOf(el.labels)), arg });
    groups.delete(key);
    return false;
  });
  return { natives: kept, groups, annotations };
}

const histogramQuantileDef: FunctionDef = {
  name: 'histogram_quantile',
  argTypes: ['scalar', 'vector'],
  optional: 0,
  returnType: 'vector',
  call: (args, context) => {
    const q = scalarArg(args, 0);
    const named = context.delayedNameRemoval === true;
    const split = splitHistograms(vectorArg(args, 1), 1, named);
    const { natives, groups } = split;
    const annotations: (string | ArgAnnotation)[] = [...split.annotations];
    if (Number.isNaN(q) || q < 0 || q > 1) annotations.unshift(invalidQuantileWarning(q));
    const out: VectorElement[] = natives.map((el) => ({ labels: el.labels, t: context.t, f: histogramQuantile(q, el.h as FloatHistogram), dropName: true }));
    const fixes: MonotonicityFix[] = [];
    for (const group of groups.values()) {
      const { value, forcedMonotonic } = bucketQuantile(q, group.buckets);
      if (forcedMonotonic !== undefined)
        fixes.push({ text: forcedMonotonicityInfo(named ? labelValue(group.labels, '__name__') : ''), arg: 1, ...forcedMonotonic });
      out.push({ labels: group.labels, t: context.t, f: value, dropName: true });
    }
    const notes = unique(annotations);
    return ok({ vector: out, ...(notes.length === 0 ? {} : { annotations: notes }), ...(fixes.length === 0 ? {} : { monotonicityFixes: fixes }) });
  },
};

/** The annotations without repeats (Prometheus keeps one of each message). */
function unique(annotations: readonly (string | ArgAnnotation)[]): (string | ArgAnnotation)[] {
  const seen = new Set<string>();
  return annotations.filter((a) => {
    const text = typeof a === 'string' ? a : a.text;
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}

const histogramFractionDef: FunctionDef = {
  name: 'histogram_fraction',
  argTypes: ['scalar', 'scalar', 'vector'],
  optional: 0,
  returnType: 'vector',
  call: (args, context) => {
    const lower = scalarArg(args, 0);
    const upper = scalarArg(args, 1);
    const { natives, groups, annotations } = splitHistograms(vectorArg(args, 2), 2, context.delayedNameRemoval === true);
    const out: VectorElement[] = natives.map((el) => ({
      labels: el.labels,
      t: context.t,
      f: histogramFraction(lower, upper, el.h as FloatHistogram),
      dropName: true,
    }));
    for (const group of groups.values()) out.push({ labels: group.labels, t: context.t, f: bucketFraction(lower, upper, group.buckets), dropName: true });
    return answer(out, unique(annotations));
  },
};

/** The variance of a native histogram's observations, each bucket standing at its (geometric, for exponential buckets) midpoint. */
function histogramVariance(h: FloatHistogram): number {
  const mean = h.sum / h.count;
  let variance = 0;
  let c = 0;
  const custom = usesCustomBuckets(h);
  for (const b of allBuckets(h)) {
    if (b.count === 0) continue;
    let val: number;
    if (custom) val = (b.upper + b.lower) / 2;
    else if (b.lower <= 0 && b.upper >= 0) val = 0;
    else {
      val = Math.sqrt(b.upper * b.lower);
      if (b.upper < 0) val = -val;
    }
    const delta = val - mean;
    [variance, c] = kahanInc(b.count * delta * delta, variance, c);
  }
  return (variance + c) / h.count;
}

/** A function of each native histogram in its vector argument; float elements are skipped. */
function ofNative(name: string, f: (h: FloatHistogram) => number): FunctionDef {
  return {
    name,
    argTypes: ['vector'],
    optional: 0,
    returnType: 'vector',
    call: (args, context) =>
      answer(vectorArg(args, 0).flatMap((el) => (el.h === undefined ? [] : [{ labels: el.labels, t: context.t, f: f(el.h), dropName: true }]))),
  };
}

/** histogram_quantile, histogram_fraction and the native-histogram statistics. */
export const histogramFunctions: readonly FunctionDef[] = [
  histogramQuantileDef,
  histogramFractionDef,
  ofNative('histogram_count', (h) => h.count),
  ofNative('histogram_sum', (h) => h.sum),
  ofNative('histogram_avg', (h) => h.sum / h.count),
  ofNative('histogram_stddev', (h) => Math.sqrt(histogramVariance(h))),
  ofNative('histogram_stdvar', histogramVariance),
];
