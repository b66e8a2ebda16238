// What the evaluator computes a node into, as Prometheus' engine does for a
// range of steps at once: series whose points sit at step times (a scalar is
// one series without labels), and the failure that stops an evaluation.
import type { PromError } from '../prom-envelope.ts';
import type { FloatHistogram, Labels } from './sample-source.ts';
import type { FPoint, HPoint, Vector, VectorElement } from './values.ts';

/** One series of a node's result: its points at the steps where it has a value. */
export interface EvalSeries {
  labels: Labels;
  /** Prometheus 3's delayed name removal: `__name__` is still in `labels` but leaves with the answer. */
  dropName: boolean;
  floats: FPoint[];
  histograms: HPoint[];
}

/** The steps an evaluator walks: start, start + interval, … up to end (all Unix ms). */
export interface StepRange {
  readonly start: number;
  readonly end: number;
  readonly interval: number;
}

/** How many steps a range has. */
export const stepCount = (r: StepRange): number => (r.end < r.start ? 0 : Math.floor((r.end - r.start) / r.interval) + 1);

/**
 * Why an evaluation stopped, in Prometheus' terms. Thrown inside the
 * evaluator only (Prometheus' ev.error/recover does the same: an error deep in
 * a recursive evaluation ends it) and turned into a Result at engine.ts.
 */
export class EvalFailure extends Error {
  readonly error: PromError;
  constructor(error: PromError) {
    super(error.message);
    this.error = error;
  }
}

/** Ends the evaluation with `error`. */
export function stop(error: PromError): never {
  throw new EvalFailure(error);
}

const sep = '\u00ff';

/** A key equal for equal label sets (names and values never contain U+00FF U+00FE together in practice; Prometheus hashes). */
export function labelsKey(labels: Labels): string {
  let key = '';
  for (const [n, v] of labels) key += `${n}${sep}${v}\u00fe`;
  return key;
}

/** The labels without `__name__`. */
export const dropMetricName = (labels: Labels): Labels => (labels.some(([n]) => n === '__name__') ? labels.filter(([n]) => n !== '__name__') : labels);

/** The value of label `name`, or '' (Prometheus' Get). */
export function labelValue(labels: Labels, name: string): string {
  for (const [n, v] of labels) if (n === name) return v;
  return '';
}

/** How many samples a histogram counts for in the sample budget: Prometheus' HPoint.size, its bytes (168 + 8 per span, bucket and bound) / 16. */
export function histogramSize(h: FloatHistogram): number {
  const slices = h.positiveSpans.length + h.negativeSpans.length + h.positiveBuckets.length + h.negativeBuckets.length + (h.customValues?.length ?? 0);
  return Math.floor((168 + 8 * slices + 8) / 16);
}

/** Samples a vector holds. */
export function vectorSamples(v: Vector): number {
  let n = 0;
  for (const e of v) n += e.h === undefined ? 1 : histogramSize(e.h);
  return n;
}

/** Samples a set of series holds. */
export function seriesSamples(series: readonly EvalSeries[]): number {
  let n = 0;
  for (const s of series) {
    n += s.floats.length;
    for (const p of s.histograms) n += histogramSize(p.h);
  }
  return n;
}

/** Appends an element's value to a series at step `t`. */
export function addPoint(series: EvalSeries, t: number, e: VectorElement): void {
  if (e.h === undefined) series.floats.push({ t, f: e.f });
  else series.histograms.push({ t, h: e.h });
}

/**
 * Walks a series' points step by step, as Prometheus' gatherVector: each
 * call with the next step time gives the point at that time, if any.
 */
export class SeriesCursor {
  private fi = 0;
  private hi = 0;
  private readonly series: EvalSeries;

  constructor(series: EvalSeries) {
    this.series = series;
  }

  /** The element at step `t` (steps must be asked in ascending order). */
  at(t: number): VectorElement | undefined {
    const { floats, histograms } = this.series;
    while (this.fi < floats.length && (floats[this.fi]?.t ?? Infinity) < t) this.fi++;
    while (this.hi < histograms.length && (histograms[this.hi]?.t ?? Infinity) < t) this.hi++;
    const { labels, dropName } = this.series;
    const f = floats[this.fi];
    if (f !== undefined && f.t === t) return dropName ? { labels, t, f: f.f, dropName } : { labels, t, f: f.f };
    const h = histograms[this.hi];
    if (h !== undefined && h.t === t) return dropName ? { labels, t, f: 0, h: h.h, dropName } : { labels, t, f: 0, h: h.h };
    return undefined;
  }
}
