// How a range function's per-series answer becomes an element of the step's
// vector: the series' labels kept (with __name__), marked for delayed name
// removal, at the step's time.
import type { FloatHistogram, Labels } from '../sample-source.ts';
import type { VectorElement, WindowSeries } from '../values.ts';
import { labelValue } from './label-set.ts';

/** What a range function computes for one series: a float, a histogram, or nothing. */
export type SeriesValue = { readonly f: number } | { readonly h: FloatHistogram } | undefined;

/** The output element for `series` at `t`. */
export function elementOf(labels: Labels, t: number, value: { readonly f: number } | { readonly h: FloatHistogram }, dropName: boolean): VectorElement {
  return 'h' in value ? { labels, t, f: 0, h: value.h, dropName } : { labels, t, f: value.f, dropName };
}

/** The series' metric name, for annotations. */
export const metricNameOf = (series: WindowSeries): string => labelValue(series.labels, '__name__');
