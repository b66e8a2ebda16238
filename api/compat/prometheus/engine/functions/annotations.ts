// The warnings and infos functions attach to a result, in Prometheus' words
// (util/annotations). Prometheus appends the expression's position to each
// when the API prints it; the evaluator, which knows positions, adds that.

const quoted = (s: string): string => JSON.stringify(s);

/** rate()/increase() over a metric whose name does not look like a counter. */
export const possibleNonCounterInfo = (metric: string): string =>
  `PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: ${quoted(metric)}`;

/** A window holding both floats and histograms. */
export const mixedFloatsHistogramsWarning = (metric: string): string =>
  `PromQL warning: encountered a mix of histograms and floats for metric name ${quoted(metric)}`;

/** A window of floats and histograms where the histograms were ignored. */
export const histogramIgnoredInMixedRangeInfo = (metric: string): string =>
  `PromQL info: ignored histograms in a range containing both floats and histograms for metric name ${quoted(metric)}`;

/** Exponential and custom-bucket histograms combined. */
export const mixedExponentialCustomWarning = (metric: string): string =>
  `PromQL warning: vector contains a mix of histograms with exponential and custom buckets schemas for metric name ${quoted(metric)}`;

/** A gauge histogram given to a counter function. */
export const histogramNotCounterWarning = (metric: string): string => `PromQL warning: this native histogram metric is not a counter: ${quoted(metric)}`;

/** A counter histogram given to a gauge function. */
export const histogramNotGaugeWarning = (metric: string): string => `PromQL warning: this native histogram metric is not a gauge: ${quoted(metric)}`;

/** A quantile outside [0, 1]. */
export const invalidQuantileWarning = (q: number): string => `PromQL warning: quantile value should be between 0 and 1, got ${formatG(q)}`;

/** A classic bucket without a parsable `le`. */
export const badBucketLabelWarning = (metric: string, le: string): string =>
  `PromQL warning: bucket label "le" is missing or has a malformed value of ${quoted(le)}${metric === '' ? '' : ` for metric name ${quoted(metric)}`}`;

/** Classic and native buckets of the same series at one step. */
export const mixedClassicNativeWarning = (metric: string): string =>
  `PromQL warning: vector contains a mix of classic and native histograms${metric === '' ? '' : ` for metric name ${quoted(metric)}`}`;

/** Classic buckets whose counts decrease with `le`. */
export const forcedMonotonicityInfo = (metric: string): string =>
  `PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)${metric === '' ? '' : ` for metric name ${quoted(metric)}`}`;

/** sort() in a range query. */
export const sortInRangeQueryWarning = 'PromQL warning: sort is ineffective for range queries since results are always ordered by labels';

/** Go's %g for the numbers these messages print. */
function formatG(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const exp = x === 0 ? 0 : Math.floor(Math.log10(Math.abs(x)));
  if (exp < -4 || exp >= 21) {
    const [m, e] = x.toExponential().split('e');
    const n = Number(e);
    return `${m}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  }
  return String(x);
}
