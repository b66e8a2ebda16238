// Compares two Prometheus API answers as the engine differential requires:
// the same status (an error answers the same errorType), the same result
// type, the same series label sets (in the same order where Prometheus
// orders an instant vector — sort, sort_desc, topk, bottomk — otherwise as
// sets), timestamps exactly equal, float values within 1e-9 relative with NaN
// equal to NaN and infinities to themselves, and native histograms equal
// field by field (count, sum, every bucket's boundaries and count); and
// the warnings and infos beside the data equal as sets.
import type { PromAnswer } from './promql-client.ts';

type RawPoint = readonly [number, string];
interface RawHistogram {
  readonly count?: string;
  readonly sum?: string;
  readonly buckets?: ReadonlyArray<readonly [number, string, string, string]>;
}
type RawHistogramPoint = readonly [number, RawHistogram];

/** One point of a series: a float or a native histogram. */
type Point = { readonly t: number; readonly v: string } | { readonly t: number; readonly h: RawHistogram };

interface Series {
  readonly key: string;
  readonly points: readonly Point[];
}

/** A label set as one comparable string, names sorted. */
export function labelKey(metric: unknown): string {
  const labels = Object.entries((metric ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${labels.map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`).join(', ')}}`;
}

interface RawSeries {
  metric?: unknown;
  value?: RawPoint;
  values?: RawPoint[];
  histogram?: RawHistogramPoint;
  histograms?: RawHistogramPoint[];
}

function pointsOf(s: RawSeries): Point[] {
  const floats: Point[] = [...(s.value === undefined ? [] : [s.value]), ...(s.values ?? [])].map(([t, v]) => ({ t, v }));
  const hists: Point[] = [...(s.histogram === undefined ? [] : [s.histogram]), ...(s.histograms ?? [])].map(([t, h]) => ({ t, h }));
  return [...floats, ...hists].sort((a, b) => a.t - b.t);
}

/** The answer's series in the answer's order (a scalar or string is one series with no labels). */
function seriesOf(answer: PromAnswer): Series[] {
  const result = answer.result;
  switch (answer.resultType) {
    case 'scalar':
    case 'string': {
      const [t, v] = result as RawPoint;
      return [{ key: '{}', points: [{ t, v }] }];
    }
    case 'vector':
    case 'matrix':
      return (result as RawSeries[]).map((s) => ({ key: labelKey(s.metric), points: pointsOf(s) }));
    default:
      return [];
  }
}

/** A sample value as Prometheus prints it (`+Inf`, `-Inf` and `NaN` are not JavaScript number literals). */
export function parseValue(text: string): number {
  switch (text) {
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    default:
      return Number(text);
  }
}

/** Whether two sample values (Prometheus' strings) are equal within 1e-9 relative; NaN equals NaN, an infinity itself. */
export function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = parseValue(a);
  const y = parseValue(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

function histogramDiff(a: RawHistogram, b: RawHistogram): string | undefined {
  if (!sameValue(a.count ?? '0', b.count ?? '0')) return `histogram count ${b.count ?? ''}, expected ${a.count ?? ''}`;
  if (!sameValue(a.sum ?? '0', b.sum ?? '0')) return `histogram sum ${b.sum ?? ''}, expected ${a.sum ?? ''}`;
  const ab = a.buckets ?? [];
  const bb = b.buckets ?? [];
  if (ab.length !== bb.length) return `${bb.length} histogram buckets, expected ${ab.length}`;
  for (const [i, [rule, lo, hi, n]] of ab.entries()) {
    const o = bb[i];
    if (o === undefined) return 'internal: bucket index';
    if (o[0] !== rule || !sameValue(lo, o[1]) || !sameValue(hi, o[2]) || !sameValue(n, o[3]))
      return `bucket ${i} ${JSON.stringify(o)}, expected ${JSON.stringify([rule, lo, hi, n])}`;
  }
  return undefined;
}

function pointDiff(key: string, r: Point, g: Point, j: number): string | undefined {
  if (g.t !== r.t) return `${key}: point ${j} at ${g.t}, expected ${r.t}`;
  if ('v' in r)
    return 'v' in g ? (sameValue(r.v, g.v) ? undefined : `${key} @${r.t}: ${g.v}, expected ${r.v}`) : `${key} @${r.t}: a histogram, expected ${r.v}`;
  if ('v' in g) return `${key} @${r.t}: ${g.v}, expected a histogram`;
  const d = histogramDiff(r.h, g.h);
  return d === undefined ? undefined : `${key} @${r.t}: ${d}`;
}

function seriesDiff(r: Series, g: Series): string | undefined {
  if (r.points.length !== g.points.length) {
    const times = (s: Series): string =>
      s.points
        .slice(0, 3)
        .map((p) => p.t)
        .join(',');
    return `${r.key}: ${g.points.length} points, expected ${r.points.length} (first times ${times(g)} vs ${times(r)})`;
  }
  for (const [j, p] of r.points.entries()) {
    const g1 = g.points[j];
    if (g1 === undefined) return 'internal: point index';
    const d = pointDiff(r.key, p, g1, j);
    if (d !== undefined) return d;
  }
  return undefined;
}

const byKey = (a: Series, b: Series): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** The first value of a one-point series, for order comparisons ('' for a histogram). */
const firstValue = (s: Series): string => {
  const p = s.points[0];
  return p !== undefined && 'v' in p ? p.v : '';
};

/**
 * The series in runs of equal values (in answer order), each run sorted by
 * label set: an ordered answer must agree run by run, since Prometheus'
 * sorts leave the order of equal values to their implementation.
 */
function orderedRuns(series: readonly Series[]): Series[] {
  const out: Series[] = [];
  let run: Series[] = [];
  for (const s of series) {
    const last = run[run.length - 1];
    if (last !== undefined && !sameValue(firstValue(last), firstValue(s))) {
      out.push(...run.sort(byKey));
      run = [];
    }
    run.push(s);
  }
  out.push(...run.sort(byKey));
  return out;
}

/** How the target's answer differs from the reference's, or undefined when they are equal. */
export function answerDiff(reference: PromAnswer, target: PromAnswer, ordered: boolean): string | undefined {
  if (reference.status !== 'success') {
    if (target.status === 'success') return `answered ${String(target.resultType)}, expected error ${reference.errorType ?? ''} (${reference.error ?? ''})`;
    return target.errorType === reference.errorType
      ? undefined
      : `error ${target.errorType ?? target.status} (${(target.error ?? '').slice(0, 200)}), expected ${reference.errorType ?? ''} (${reference.error ?? ''})`;
  }
  if (target.status !== 'success') return `HTTP ${target.httpStatus} ${target.errorType ?? target.status}: ${(target.error ?? '').slice(0, 200)}`;
  if (reference.resultType !== target.resultType) return `resultType ${String(target.resultType)}, expected ${String(reference.resultType)}`;
  const inOrder = ordered && reference.resultType === 'vector';
  const ref = inOrder ? orderedRuns(seriesOf(reference)) : seriesOf(reference).sort(byKey);
  const got = inOrder ? orderedRuns(seriesOf(target)) : seriesOf(target).sort(byKey);
  const refKeys = new Set(ref.map((s) => s.key));
  const gotKeys = new Set(got.map((s) => s.key));
  const missing = [...refKeys].filter((k) => !gotKeys.has(k));
  const extra = [...gotKeys].filter((k) => !refKeys.has(k));
  if (missing.length > 0 || extra.length > 0) {
    const few = (keys: string[]): string => `${keys.slice(0, 3).join(' ')}${keys.length > 3 ? ` (+${keys.length - 3})` : ''}`;
    return `series differ: missing ${few(missing)}; extra ${few(extra)}`;
  }
  if (ref.length !== got.length) return `${got.length} series, expected ${ref.length} (duplicate label sets)`;
  for (const [i, r] of ref.entries()) {
    const g = got[i];
    if (g === undefined) return 'internal: series index';
    if (g.key !== r.key) return `order: ${g.key} at position ${i}, expected ${r.key}`;
    const d = seriesDiff(r, g);
    if (d !== undefined) return d;
  }
  return undefined;
}

/** A short description of an answer for a report: status or result type, series count, the first series. */
export function describeAnswer(answer: PromAnswer): string {
  if (answer.status !== 'success') return `${answer.httpStatus} ${answer.errorType ?? answer.status}: ${answer.error ?? ''}`.slice(0, 400);
  const series = seriesOf(answer);
  const first = series.slice(0, 2).map((s) => `${s.key}=${JSON.stringify(s.points.slice(0, 3).map((p) => ('v' in p ? [p.t, p.v] : [p.t, p.h])))}`);
  return `${String(answer.resultType)} ${series.length} series ${first.join(' ')}`.slice(0, 600);
}

/** How many series and points (floats and histograms) an answer holds. */
export function answerSize(answer: PromAnswer): { readonly series: number; readonly points: number } {
  const series = seriesOf(answer);
  return { series: series.length, points: series.reduce((n, s) => n + s.points.length, 0) };
}

/** The annotations an answer carried beside its data: Prometheus 3's `warnings` and `infos`. */
export interface AnswerNotes {
  readonly warnings: readonly string[];
  readonly infos: readonly string[];
}

/** Prometheus' last line when it printed ten annotations of a kind and left the rest out. */
const omittedLine = /^\d+ more (warning|info) annotations omitted$/;

function notesListDiff(reference: readonly string[], target: readonly string[]): string | undefined {
  const refOmitted = reference.find((n) => omittedLine.test(n));
  const gotOmitted = target.find((n) => omittedLine.test(n));
  // Past ten, which ten Prometheus prints follows Go's map order: only how many it left out compares.
  if (refOmitted !== undefined || gotOmitted !== undefined) {
    return refOmitted === gotOmitted ? undefined : `${gotOmitted ?? `${target.length} printed`}, expected ${refOmitted ?? `${reference.length} printed`}`;
  }
  const missing = reference.filter((n) => !target.includes(n));
  const extra = target.filter((n) => !reference.includes(n));
  if (missing.length === 0 && extra.length === 0 && reference.length === target.length) return undefined;
  return `missing ${JSON.stringify(missing)}; extra ${JSON.stringify(extra)}`;
}

/** How the target's warnings and infos differ from the reference's, as sets (Prometheus prints them in map order), or undefined. */
export function notesDiff(reference: AnswerNotes, target: AnswerNotes): string | undefined {
  const warnings = notesListDiff(reference.warnings, target.warnings);
  if (warnings !== undefined) return `warnings differ: ${warnings}`;
  const infos = notesListDiff(reference.infos, target.infos);
  return infos === undefined ? undefined : `infos differ: ${infos}`;
}
