// The warnings and infos functions attach to a result, in Prometheus' words
// (util/annotations). Prometheus appends the expression's position to each
// when the API prints it; the evaluator, which knows positions, adds that.

import { formatGoG } from './go-float-format.ts';

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
export const invalidQuantileWarning = (q: number): string => `PromQL warning: quantile value should be between 0 and 1, got ${formatGoG(q)}`;

/** A classic bucket without a parsable `le`. */
export const badBucketLabelWarning = (metric: string, le: string): string =>
  `PromQL warning: bucket label "le" is missing or has a malformed value of ${quoted(le)}${metric === '' ? '' : ` for metric name ${quoted(metric)}`}`;

/** Classic and native buckets of the same series at one step. */
export const mixedClassicNativeWarning = (metric: string): string =>
  `PromQL warning: vector contains a mix of classic and native histograms${metric === '' ? '' : ` for metric name ${quoted(metric)}`}`;

/** Classic buckets whose counts decrease with `le`: the message before the details the query's fixes add. */
export const forcedMonotonicityInfo = (metric: string): string =>
  `PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)${metric === '' ? '' : ` for metric name ${quoted(metric)}`}`;

/** What Prometheus folded over a query's monotonicity fixes; `samples` as Go's int64 prints it. */
export interface MonotonicityDetails {
  readonly minBucket: number;
  readonly maxBucket: number;
  readonly maxDiff: number;
  readonly samples: bigint;
  readonly minTs: number;
  readonly maxTs: number;
}

/** RFC 3339 of a time's whole seconds (Go's time.Unix(ms / 1000, 0).UTC()). */
const rfc3339Seconds = (ms: number): string => new Date(Math.trunc(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** The details Prometheus appends to the monotonicity info: bounds, largest decrease, samples and times. */
export const monotonicityDetails = (d: MonotonicityDetails): string =>
  `, from buckets ${formatGoG(d.minBucket)} to ${formatGoG(d.maxBucket)}, with a max diff of ${formatGoG(d.maxDiff, 2)}, over ${d.samples} samples from ${rfc3339Seconds(d.minTs)} to ${rfc3339Seconds(d.maxTs)}`;

/** sort() in a range query. */
export const sortInRangeQueryWarning = 'PromQL warning: sort is ineffective for range queries since results are always ordered by labels';
