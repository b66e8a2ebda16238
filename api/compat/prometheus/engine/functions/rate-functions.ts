// rate, increase and delta with Prometheus 3's extrapolation to the window's
// edges (the counter's zero point limits extrapolation backwards), and irate
// and idelta from the window's last two samples; floats and native histograms.
import type { CallContext, VectorElement, WindowSeries } from '../values.ts';
import type { FloatHistogram } from '../sample-source.ts';
import type { FunctionDef } from './function-types.ts';
import {
  histogramNotCounterWarning,
  histogramNotGaugeWarning,
  mixedExponentialCustomWarning,
  mixedFloatsHistogramsWarning,
  possibleNonCounterInfo,
} from './annotations.ts';
import {
  addHistograms,
  detectReset,
  divideHistogram,
  emptyHistogramLike,
  reduceSchema,
  scaleHistogram,
  usesCustomBuckets,
  withHint,
} from './histogram-math.ts';
import { elementOf, metricNameOf } from './series-output.ts';
import type { SeriesValue } from './series-output.ts';
import { answer, matrixArg } from './step-args.ts';

interface Computed {
  readonly value: SeriesValue;
  readonly annotations: readonly string[];
}

const nothing = (annotations: readonly string[] = []): Computed => ({ value: undefined, annotations });

/** The increase of a counter histogram (or the change of a gauge one) between the first and last points, resets added back. */
function histogramIncrease(series: WindowSeries, isCounter: boolean): Computed {
  const points = series.histograms;
  const name = metricNameOf(series);
  const annotations: string[] = [];
  const first = points[0]?.h;
  const last = points[points.length - 1]?.h;
  const second = points[1]?.h;
  if (first === undefined || last === undefined || second === undefined) return nothing();
  if (isCounter && (first.counterResetHint === 'gauge' || last.counterResetHint === 'gauge')) annotations.push(histogramNotCounterWarning(name));
  let prev: FloatHistogram = first;
  if (isCounter && detectReset(second, prev)) prev = emptyHistogramLike(second);
  const custom = usesCustomBuckets(prev);
  if (usesCustomBuckets(last) !== custom) return nothing([...annotations, mixedExponentialCustomWarning(name)]);
  let minSchema = Math.min(last.schema, prev.schema);
  for (const p of points.slice(1, -1)) {
    if (!isCounter) continue;
    if (p.h.counterResetHint === 'gauge') annotations.push(histogramNotCounterWarning(name));
    minSchema = Math.min(minSchema, p.h.schema);
    if (usesCustomBuckets(p.h) !== custom) return nothing([mixedExponentialCustomWarning(name)]);
  }
  const diff = addHistograms(reduceSchema(last, minSchema), prev, true);
  if (!diff.ok) return nothing([mixedExponentialCustomWarning(name)]);
  let h = diff.value.h;
  if (isCounter) {
    for (let i = 1; i < points.length; i++) {
      const curr = points[i]?.h;
      if (curr === undefined) continue;
      if (detectReset(curr, prev)) {
        const sum = addHistograms(h, prev);
        if (!sum.ok) return nothing([mixedExponentialCustomWarning(name)]);
        h = sum.value.h;
      }
      prev = curr;
    }
  } else if (first.counterResetHint !== 'gauge' || last.counterResetHint !== 'gauge') {
    annotations.push(histogramNotGaugeWarning(name));
  }
  return { value: { h: withHint(h, 'gauge') }, annotations: [...new Set(annotations)] };
}

/** rate/increase/delta of one series at one step, as Prometheus' extrapolatedRate. */
function extrapolatedRate(series: WindowSeries, context: CallContext, isCounter: boolean, isRate: boolean): Computed {
  const { floats, histograms } = series;
  if (floats.length > 0 && histograms.length > 0) return nothing([mixedFloatsHistogramsWarning(metricNameOf(series))]);
  const rangeStart = context.windowStart;
  const rangeEnd = context.windowEnd;
  let resultFloat = 0;
  let resultHistogram: FloatHistogram | undefined;
  let annotations: readonly string[] = [];
  let firstT: number;
  let lastT: number;
  let intervals: number;
  if (histograms.length > 1) {
    const computed = histogramIncrease(series, isCounter);
    annotations = computed.annotations;
    if (computed.value === undefined || !('h' in computed.value)) return computed;
    resultHistogram = computed.value.h;
    intervals = histograms.length - 1;
    firstT = histograms[0]?.t ?? 0;
    lastT = histograms[intervals]?.t ?? 0;
  } else if (floats.length > 1) {
    intervals = floats.length - 1;
    const first = floats[0];
    const last = floats[intervals];
    if (first === undefined || last === undefined) return nothing();
    firstT = first.t;
    lastT = last.t;
    resultFloat = last.f - first.f;
    if (isCounter) {
      for (let i = 1; i < floats.length; i++) {
        const prev = floats[i - 1]?.f ?? 0;
        if ((floats[i]?.f ?? 0) < prev) resultFloat += prev;
      }
    }
  } else {
    return nothing();
  }
  let durationToStart = (firstT - rangeStart) / 1000;
  let durationToEnd = (rangeEnd - lastT) / 1000;
  const sampledInterval = (lastT - firstT) / 1000;
  const averageBetween = sampledInterval / intervals;
  const threshold = averageBetween * 1.1;
  if (durationToStart >= threshold) durationToStart = averageBetween / 2;
  if (isCounter) {
    // A counter cannot go below zero: extrapolate backwards no further than where the slope reaches it.
    let durationToZero = durationToStart;
    const firstFloat = floats[0]?.f;
    const firstHistogram = histograms[0]?.h;
    if (resultHistogram === undefined && resultFloat > 0 && firstFloat !== undefined && firstFloat >= 0) {
      durationToZero = sampledInterval * (firstFloat / resultFloat);
    } else if (resultHistogram !== undefined && resultHistogram.count > 0 && firstHistogram !== undefined && firstHistogram.count >= 0) {
      durationToZero = sampledInterval * (firstHistogram.count / resultHistogram.count);
    }
    if (durationToZero < durationToStart) durationToStart = durationToZero;
  }
  if (durationToEnd >= threshold) durationToEnd = averageBetween / 2;
  let factor = sampledInterval === 0 ? 1 : (sampledInterval + durationToStart + durationToEnd) / sampledInterval;
  if (isRate) factor /= (rangeEnd - rangeStart) / 1000;
  if (resultHistogram !== undefined) return { value: { h: scaleHistogram(resultHistogram, factor) }, annotations };
  return { value: { f: resultFloat * factor }, annotations };
}

interface Point {
  readonly t: number;
  readonly f: number;
  readonly h?: FloatHistogram;
}

/** The window's last two samples, floats and histograms merged by time, as Prometheus' instantValue picks them. */
function lastTwo(series: WindowSeries): readonly Point[] {
  const ss: Point[] = series.floats.slice(-2).map((p) => ({ t: p.t, f: p.f }));
  for (const p of series.histograms.slice(-2)) {
    const s: Point = { t: p.t, f: 0, h: p.h };
    const [a, b] = ss;
    if (a === undefined) ss.push(s);
    else if (b === undefined) {
      if (s.t < a.t) ss.unshift(s);
      else ss.push(s);
    } else if (s.t < a.t) {
      continue;
    } else if (s.t > b.t) {
      ss[0] = b;
      ss[1] = s;
    } else {
      ss[0] = s;
    }
  }
  return ss;
}

/** irate/idelta of one series at one step. */
function instantValue(series: WindowSeries, isRate: boolean): Computed {
  if (series.floats.length + series.histograms.length < 2) return nothing();
  const [older, newer] = lastTwo(series);
  if (older === undefined || newer === undefined) return nothing();
  const interval = newer.t - older.t;
  if (interval === 0) return nothing();
  const name = metricNameOf(series);
  if (older.h === undefined && newer.h === undefined) {
    // A counter that went down was reset: its last value is the increase since.
    const f = isRate && newer.f < older.f ? newer.f : newer.f - older.f;
    return { value: { f: isRate ? f / (interval / 1000) : f }, annotations: [] };
  }
  if (older.h === undefined || newer.h === undefined) return nothing([mixedFloatsHistogramsWarning(name)]);
  const annotations: string[] = [];
  if (isRate && (newer.h.counterResetHint === 'gauge' || older.h.counterResetHint === 'gauge')) annotations.push(histogramNotCounterWarning(name));
  if (!isRate && (newer.h.counterResetHint !== 'gauge' || older.h.counterResetHint !== 'gauge')) annotations.push(histogramNotGaugeWarning(name));
  let h = newer.h;
  if (!isRate || !detectReset(newer.h, older.h)) {
    const diff = addHistograms(newer.h, older.h, true);
    if (!diff.ok) return nothing([...annotations, mixedExponentialCustomWarning(name)]);
    h = diff.value.h;
  }
  h = withHint(h, 'gauge');
  return { value: { h: isRate ? divideHistogram(h, interval / 1000) : h }, annotations };
}

const counterSuffixes = ['_total', '_sum', '_count', '_bucket'];

/** A range function applying `compute` to every series of its window. */
function perSeries(name: string, compute: (series: WindowSeries, context: CallContext) => Computed, warnNonCounter = false): FunctionDef {
  return {
    name,
    argTypes: ['matrix'],
    optional: 0,
    returnType: 'vector',
    call: (args, context) => {
      const out: VectorElement[] = [];
      const annotations: string[] = [];
      for (const series of matrixArg(args, 0)) {
        const computed = compute(series, context);
        annotations.push(...computed.annotations);
        if (computed.value === undefined) continue;
        out.push(elementOf(series.labels, context.t, computed.value, true));
        const metric = metricNameOf(series);
        if (warnNonCounter && 'f' in computed.value && metric !== '' && !counterSuffixes.some((s) => metric.endsWith(s))) {
          annotations.push(possibleNonCounterInfo(metric));
        }
      }
      return answer(out, [...new Set(annotations)]);
    },
  };
}

/** rate, increase, delta, irate and idelta. */
export const rateFunctions: readonly FunctionDef[] = [
  perSeries('rate', (s, c) => extrapolatedRate(s, c, true, true), true),
  perSeries('increase', (s, c) => extrapolatedRate(s, c, true, false), true),
  perSeries('delta', (s, c) => extrapolatedRate(s, c, false, false)),
  perSeries('irate', (s) => instantValue(s, true)),
  perSeries('idelta', (s) => instantValue(s, false)),
];
