// Stored samples as the evaluator reads them: staleness markers recognised
// by their exact bits (Prometheus' StaleNaN), the instant-vector lookup with
// its left-open lookback window (t - lookback, t], and a series' points
// without markers for range windows.
import type { FloatHistogram, StoredSeries } from './sample-source.ts';
import type { FPoint, HPoint } from './values.ts';

/** Whether sample `i` of a stored series is a staleness marker (0x7ff0000000000002; read through the bits, never as a number). */
export function isStale(series: StoredSeries, i: number): boolean {
  const v = series.values;
  if (!Number.isNaN(v[i] ?? 0)) return false;
  const words = new Uint32Array(v.buffer, v.byteOffset, v.length * 2);
  // Little-endian: the low word first.
  return words[2 * i] === 2 && words[2 * i + 1] === 0x7ff00000;
}

/** A stored series' points without staleness markers, floats and histograms apart, ascending. */
export interface SeriesPoints {
  readonly floats: FPoint[];
  readonly histograms: HPoint[];
}

/** The points a range window may hold: every sample but the markers. */
export function pointsOf(series: StoredSeries): SeriesPoints {
  const floats: FPoint[] = [];
  const histograms: HPoint[] = [];
  for (let i = 0; i < series.times.length; i++) {
    if (isStale(series, i)) continue;
    const t = series.times[i] ?? 0;
    const h = series.histograms?.[i];
    if (h !== undefined) histograms.push({ t, h });
    else floats.push({ t, f: series.values[i] ?? 0 });
  }
  return { floats, histograms };
}

/** One looked-up sample: its own time and value. */
export interface Found {
  readonly t: number;
  readonly f: number;
  readonly h?: FloatHistogram;
}

/**
 * Looks samples up at ascending reference times, as Prometheus'
 * vectorSelectorSingle: the newest sample at or before the time, if it is
 * newer than time - lookback and not a staleness marker.
 */
export class InstantLookup {
  private next = 0;
  private readonly series: StoredSeries;
  private readonly lookbackMs: number;

  constructor(series: StoredSeries, lookbackMs: number) {
    this.series = series;
    this.lookbackMs = lookbackMs;
  }

  /** The sample that stands for `refTime` (ascending across calls; a smaller time restarts the search). */
  at(refTime: number): Found | undefined {
    const i = this.indexAt(refTime);
    if (i < 0) return undefined;
    const t = this.series.times[i] ?? 0;
    const h = this.series.histograms?.[i];
    return h === undefined ? { t, f: this.series.values[i] ?? 0 } : { t, f: 0, h };
  }

  /** The index of the sample `at` would give, or -1: no object made, for loops over many series and steps. */
  indexAt(refTime: number): number {
    const times = this.series.times;
    if (this.next > 0 && (times[this.next - 1] ?? -Infinity) > refTime) this.next = 0;
    while (this.next < times.length && (times[this.next] ?? Infinity) <= refTime) this.next++;
    const i = this.next - 1;
    if (i < 0) return -1;
    if ((times[i] ?? 0) <= refTime - this.lookbackMs || isStale(this.series, i)) return -1;
    return i;
  }
}

/** The points of an ascending array inside (from, to], found from a cursor that only moves forward. */
export class WindowCursor<P extends { readonly t: number }> {
  private lo = 0;
  private hi = 0;
  private readonly points: readonly P[];

  constructor(points: readonly P[]) {
    this.points = points;
  }

  /** The points with from < t <= to (windows must move forward; an earlier one restarts). */
  window(from: number, to: number): P[] {
    const p = this.points;
    if ((this.lo > 0 && (p[this.lo - 1]?.t ?? -Infinity) > from) || (this.hi > 0 && (p[this.hi - 1]?.t ?? -Infinity) > to)) {
      this.lo = 0;
      this.hi = 0;
    }
    while (this.lo < p.length && (p[this.lo]?.t ?? Infinity) <= from) this.lo++;
    if (this.hi < this.lo) this.hi = this.lo;
    while (this.hi < p.length && (p[this.hi]?.t ?? Infinity) <= to) this.hi++;
    return p.slice(this.lo, this.hi);
  }
}
