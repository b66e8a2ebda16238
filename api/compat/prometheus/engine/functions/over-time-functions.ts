// The functions that summarise each series' window: the *_over_time family,
// changes, resets, deriv and predict_linear, as Prometheus computes them
// (compensated sums, the overflow-safe mean, NaN ordering of min and max).
import type { CallContext, FPoint, VectorElement, WindowSeries } from '../values.ts';
import type { FunctionDef, StepArg } from './function-types.ts';
import { histogramIgnoredInMixedRangeInfo, invalidQuantileWarning, mixedExponentialCustomWarning, mixedFloatsHistogramsWarning } from './annotations.ts';
import { divideHistogram, detectReset, histogramsEqual, sumHistograms } from './histogram-math.ts';
import { kahanInc } from './kahan-sum.ts';
import { elementOf, metricNameOf } from './series-output.ts';
import type { SeriesValue } from './series-output.ts';
import { answer, matrixArg, scalarArg } from './step-args.ts';
import { quantileOf } from './quantile.ts';

interface Computed {
  readonly value: SeriesValue;
  readonly annotations?: readonly string[];
}

type Compute = (series: WindowSeries, args: readonly StepArg[], context: CallContext) => Computed;

/** A function of a range vector (at argument `matrixAt`) summarising each series' window. */
function overTime(
  name: string,
  compute: Compute,
  extra: { readonly keepName?: boolean; readonly scalarFirst?: boolean; readonly scalarAfter?: boolean } = {},
): FunctionDef {
  const argTypes =
    extra.scalarFirst === true ? (['scalar', 'matrix'] as const) : extra.scalarAfter === true ? (['matrix', 'scalar'] as const) : (['matrix'] as const);
  const matrixAt = extra.scalarFirst === true ? 1 : 0;
  return {
    name,
    argTypes,
    optional: 0,
    returnType: 'vector',
    call: (args, context) => {
      const out: VectorElement[] = [];
      const annotations: string[] = [];
      for (const series of matrixArg(args, matrixAt)) {
        if (series.floats.length + series.histograms.length === 0) continue;
        const computed = compute(series, args, context);
        annotations.push(...(computed.annotations ?? []));
        if (computed.value === undefined) continue;
        const dropName = extra.keepName === true ? series.dropName === true : true;
        out.push(elementOf(series.labels, context.t, computed.value, dropName));
      }
      return answer(out, [...new Set(annotations)]);
    },
  };
}

/** Runs `f` over the window's floats; histograms in a mixed window are ignored with an info, a histogram-only window answers nothing. */
function floatsOnly(f: (floats: readonly FPoint[]) => number): Compute {
  return (series) => {
    if (series.floats.length === 0) return { value: undefined };
    const annotations = series.histograms.length > 0 ? [histogramIgnoredInMixedRangeInfo(metricNameOf(series))] : [];
    return { value: { f: f(series.floats) }, annotations };
  };
}

function kahanSum(floats: readonly FPoint[]): number {
  let sum = 0;
  let c = 0;
  for (const p of floats) [sum, c] = kahanInc(p.f, sum, c);
  return sum === Infinity || sum === -Infinity ? sum : sum + c;
}

/** The mean: a compensated sum divided at the end, switching to an incremental mean if the sum would overflow. */
function mean(floats: readonly FPoint[]): number {
  let sum = floats[0]?.f ?? NaN;
  let count = 1;
  let avg = 0;
  let c = 0;
  let incremental = false;
  for (let i = 1; i < floats.length; i++) {
    const f = floats[i]?.f ?? NaN;
    count = i + 1;
    if (!incremental) {
      const [newSum, newC] = kahanInc(f, sum, c);
      if (newSum !== Infinity && newSum !== -Infinity) {
        sum = newSum;
        c = newC;
        continue;
      }
      incremental = true;
      avg = sum / (count - 1);
      c /= count - 1;
    }
    const q = (count - 1) / count;
    [avg, c] = kahanInc(f / count, q * avg, q * c);
  }
  return incremental ? avg + c : sum / count + c / count;
}

function variance(floats: readonly FPoint[]): number {
  let count = 0;
  let m = 0;
  let cm = 0;
  let aux = 0;
  let ca = 0;
  for (const p of floats) {
    count++;
    const delta = p.f - (m + cm);
    [m, cm] = kahanInc(delta / count, m, cm);
    [aux, ca] = kahanInc(delta * (p.f - (m + cm)), aux, ca);
  }
  return (aux + ca) / count;
}

/** The extreme by `better` (NaN loses to any number, as Prometheus' max/min_over_time). */
function extreme(better: (cur: number, best: number) => boolean): (floats: readonly FPoint[]) => number {
  return (floats) => {
    let best = floats[0]?.f ?? NaN;
    for (const p of floats) if (better(p.f, best) || Number.isNaN(best)) best = p.f;
    return best;
  };
}

/** Least-squares slope and intercept at `interceptTime` (ms), with compensated sums. */
export function linearRegression(points: readonly FPoint[], interceptTime: number): readonly [number, number] {
  let n = 0;
  let sumX = 0,
    cX = 0,
    sumY = 0,
    cY = 0,
    sumXY = 0,
    cXY = 0,
    sumX2 = 0,
    cX2 = 0;
  const initY = points[0]?.f ?? NaN;
  let constY = true;
  for (const [i, p] of points.entries()) {
    if (constY && i > 0 && p.f !== initY) constY = false;
    n += 1;
    const x = (p.t - interceptTime) / 1e3;
    [sumX, cX] = kahanInc(x, sumX, cX);
    [sumY, cY] = kahanInc(p.f, sumY, cY);
    [sumXY, cXY] = kahanInc(x * p.f, sumXY, cXY);
    [sumX2, cX2] = kahanInc(x * x, sumX2, cX2);
  }
  if (constY) return initY === Infinity || initY === -Infinity ? [NaN, NaN] : [0, initY];
  sumX += cX;
  sumY += cY;
  sumXY += cXY;
  sumX2 += cX2;
  const covXY = sumXY - (sumX * sumY) / n;
  const varX = sumX2 - (sumX * sumX) / n;
  const slope = covXY / varX;
  return [slope, sumY / n - (slope * sumX) / n];
}

/** sum_over_time / avg_over_time: floats, or histograms when the window holds only histograms. */
function sumOrAvg(average: boolean): Compute {
  return (series) => {
    const name = metricNameOf(series);
    if (series.floats.length > 0 && series.histograms.length > 0) return { value: undefined, annotations: [mixedFloatsHistogramsWarning(name)] };
    if (series.floats.length > 0) return { value: { f: average ? mean(series.floats) : kahanSum(series.floats) } };
    const total = sumHistograms(series.histograms.map((p) => p.h));
    if (!total.ok) return { value: undefined, annotations: [mixedExponentialCustomWarning(name)] };
    return { value: { h: average ? divideHistogram(total.value.h, series.histograms.length) : total.value.h } };
  };
}

/** The window's samples, floats and histograms, in time order. */
function merged(series: WindowSeries): readonly ({ readonly f: number } | { readonly h: NonNullable<WindowSeries['histograms'][number]['h']> })[] {
  const all = [...series.floats.map((p) => ({ t: p.t, v: { f: p.f } })), ...series.histograms.map((p) => ({ t: p.t, v: { h: p.h } }))];
  return all.sort((a, b) => a.t - b.t).map((x) => x.v);
}

const changes: Compute = (series) => {
  let n = 0;
  const samples = merged(series);
  for (let i = 1; i < samples.length; i++) {
    const prev = samples[i - 1];
    const cur = samples[i];
    if (prev === undefined || cur === undefined) continue;
    if ('f' in prev && 'f' in cur) {
      if (cur.f !== prev.f && !(Number.isNaN(cur.f) && Number.isNaN(prev.f))) n++;
    } else if ('h' in prev && 'h' in cur) {
      if (!histogramsEqual(cur.h, prev.h)) n++;
    } else {
      n++;
    }
  }
  return { value: { f: n } };
};

const resets: Compute = (series) => {
  let n = 0;
  const samples = merged(series);
  for (let i = 1; i < samples.length; i++) {
    const prev = samples[i - 1];
    const cur = samples[i];
    if (prev === undefined || cur === undefined) continue;
    if ('f' in prev && 'f' in cur) {
      if (cur.f < prev.f) n++;
    } else if ('h' in prev && 'h' in cur) {
      if (detectReset(cur.h, prev.h)) n++;
    } else {
      n++;
    }
  }
  return { value: { f: n } };
};

/** deriv / predict_linear: at least two floats; histograms in the window are ignored with an info. */
function regression(predict: boolean): Compute {
  return (series, args, context) => {
    const info = series.histograms.length > 0 ? [histogramIgnoredInMixedRangeInfo(metricNameOf(series))] : [];
    if (series.floats.length < 2) return { value: undefined, annotations: series.floats.length === 1 ? info : [] };
    if (!predict) {
      const [slope] = linearRegression(series.floats, series.floats[0]?.t ?? 0);
      return { value: { f: slope }, annotations: info };
    }
    const [slope, intercept] = linearRegression(series.floats, context.t);
    return { value: { f: slope * scalarArg(args, 1) + intercept }, annotations: info };
  };
}

const quantileOverTime: Compute = (series, args) => {
  if (series.floats.length === 0) return { value: undefined };
  const q = scalarArg(args, 0);
  const annotations: string[] = [];
  if (Number.isNaN(q) || q < 0 || q > 1) annotations.push(invalidQuantileWarning(q));
  if (series.histograms.length > 0) annotations.push(histogramIgnoredInMixedRangeInfo(metricNameOf(series)));
  return {
    value: {
      f: quantileOf(
        q,
        series.floats.map((p) => p.f),
      ),
    },
    annotations,
  };
};

const lastOverTime: Compute = (series) => {
  const f = series.floats[series.floats.length - 1];
  const h = series.histograms[series.histograms.length - 1];
  if (h === undefined || (f !== undefined && h.t < f.t)) return { value: f === undefined ? undefined : { f: f.f } };
  return { value: { h: h.h } };
};

/** The *_over_time functions, changes, resets, deriv and predict_linear (absent_over_time lives with absent). */
export const overTimeFunctions: readonly FunctionDef[] = [
  overTime('avg_over_time', sumOrAvg(true)),
  overTime('sum_over_time', sumOrAvg(false)),
  overTime('count_over_time', (s) => ({ value: { f: s.floats.length + s.histograms.length } })),
  overTime('min_over_time', floatsOnly(extreme((cur, best) => cur < best))),
  overTime('max_over_time', floatsOnly(extreme((cur, best) => cur > best))),
  overTime(
    'stddev_over_time',
    floatsOnly((fs) => Math.sqrt(variance(fs))),
  ),
  overTime('stdvar_over_time', floatsOnly(variance)),
  overTime('quantile_over_time', quantileOverTime, { scalarFirst: true }),
  overTime('last_over_time', lastOverTime, { keepName: true }),
  overTime('present_over_time', () => ({ value: { f: 1 } })),
  overTime('changes', changes),
  overTime('resets', resets),
  overTime('deriv', regression(false)),
  overTime('predict_linear', regression(true), { scalarAfter: true }),
];
