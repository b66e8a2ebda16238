// The one port the PromQL engine reads stored data through: a selector's
// matchers and the closed time range of samples it needs in, the matching
// series with their samples out. The engine never sees SQL; the ClickHouse
// adapter (prom-sample-store.ts) resolves series through the tenant's series
// index and reads their samples, inside the tenant's scan (retention,
// maxQueryDays and budget already applied by whoever built the source).
import type { Result } from '../../../../src/result.ts';
import type { PromError } from '../prom-envelope.ts';

export type MatchOp = '=' | '!=' | '=~' | '!~';

export interface LabelMatcher {
  readonly name: string;
  readonly op: MatchOp;
  /** For =~ and !~ a Prometheus (RE2) regex, fully anchored by its user. */
  readonly value: string;
}

/** A series' labels as (name, value) pairs sorted by name in UTF-8 byte order, `__name__` included when the series has one. */
export type Labels = readonly (readonly [string, string])[];

/** One bucket span of a native histogram: `offset` buckets skipped, then `length` buckets. */
export interface BucketSpan {
  readonly offset: number;
  readonly length: number;
}

/**
 * A native histogram sample, as Prometheus' FloatHistogram: bucket counts are
 * absolute (not deltas). Schema -53 is a histogram with custom bounds
 * (`customValues`).
 */
export interface FloatHistogram {
  readonly counterResetHint: 'unknown' | 'reset' | 'not_reset' | 'gauge';
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  readonly count: number;
  readonly sum: number;
  readonly positiveSpans: readonly BucketSpan[];
  readonly positiveBuckets: readonly number[];
  readonly negativeSpans: readonly BucketSpan[];
  readonly negativeBuckets: readonly number[];
  readonly customValues?: readonly number[];
}

/**
 * One stored series and its samples in the requested range, ascending by
 * time, at most one sample per timestamp. `values[i]` is the float sample at
 * `times[i]`, unless `histograms?.[i]` is set: then that sample is a native
 * histogram and `values[i]` is ignored. A staleness marker is a float whose
 * bits are Prometheus' StaleNaN (0x7ff0000000000002), kept bit-exact.
 */
export interface StoredSeries {
  readonly labels: Labels;
  /** Sample timestamps in Unix milliseconds. */
  readonly times: Float64Array;
  readonly values: Float64Array;
  readonly histograms?: readonly (FloatHistogram | undefined)[];
}

/** What one selector needs: its matchers (ANDed) and samples with minT <= t <= maxT (Unix ms). */
export interface SelectRequest {
  readonly matchers: readonly LabelMatcher[];
  readonly minT: number;
  readonly maxT: number;
}

/**
 * The engine's source of series. Failures are values in Prometheus' terms
 * (a limit crossed is `execution` or `bad_data`, the store down
 * `unavailable`); `signal` aborts when the query is cancelled or times out.
 */
export interface SampleSource {
  select(request: SelectRequest, signal: AbortSignal): Promise<Result<readonly StoredSeries[], PromError>>;
  /** Every selector of a query at once (each answer at its request's place), for a source that reads them together. */
  selectAll?(requests: readonly SelectRequest[], signal: AbortSignal): Promise<Result<(readonly StoredSeries[])[], PromError>>;
}
