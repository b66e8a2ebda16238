// histogram_quantile and histogram_fraction over classic buckets and native
// histograms, and the native-histogram statistics, worked out by hand.
import { expect } from 'chai';
import type { Labels } from '../../../../../../../api/compat/prometheus/engine/sample-source.ts';
import type { StepArg } from '../../../../../../../api/compat/prometheus/engine/functions/function-types.ts';
import { call, expectClose, nativeHistogram, only, scalar, valueOf, vector, vectorOf } from './call-function.ts';

const bucket = (le: string, job = 'api'): Labels => [
  ['__name__', 'latency_bucket'],
  ['job', job],
  ['le', le],
];
const classic = (pairs: readonly (readonly [string, number])[]): StepArg => vector(pairs.map(([le, n]) => [bucket(le), n]));
const buckets = classic([
  ['1', 10],
  ['2', 20],
  ['4', 40],
  ['+Inf', 40],
]);

// Two exponential buckets at schema 0: (1,2] with 4 and (2,4] with 4 observations, sum 20.
const h = nativeHistogram(8, 20, [4, 4]);
const native = (hist = h): StepArg => ({
  type: 'vector',
  value: [
    {
      labels: [
        ['__name__', 'latency'],
        ['job', 'api'],
      ],
      t: 60_000,
      f: 0,
      h: hist,
    },
  ],
});

describe('PromQL histogram functions', () => {
  it('interpolates classic buckets linearly, grouped without le', () => {
    expectClose(valueOf(call('histogram_quantile', [scalar(0.25), buckets])), 1);
    expectClose(valueOf(call('histogram_quantile', [scalar(0.5), buckets])), 2);
    expectClose(valueOf(call('histogram_quantile', [scalar(0.75), buckets])), 3);
    expectClose(valueOf(call('histogram_quantile', [scalar(1), buckets])), 4);
    const el = only(call('histogram_quantile', [scalar(0.5), buckets]));
    expect(el.labels).to.deep.equal([
      ['__name__', 'latency_bucket'],
      ['job', 'api'],
    ]);
    expect(el.dropName).to.equal(true);
  });

  it('answers the highest finite bound for a quantile in the +Inf bucket, NaN without +Inf or observations', () => {
    expectClose(
      valueOf(
        call('histogram_quantile', [
          scalar(0.99),
          classic([
            ['1', 10],
            ['+Inf', 20],
          ]),
        ]),
      ),
      1,
    );
    expect(
      Number.isNaN(
        valueOf(
          call('histogram_quantile', [
            scalar(0.5),
            classic([
              ['1', 10],
              ['2', 20],
            ]),
          ]),
        ),
      ),
    ).to.equal(true);
    expect(
      Number.isNaN(
        valueOf(
          call('histogram_quantile', [
            scalar(0.5),
            classic([
              ['1', 0],
              ['+Inf', 0],
            ]),
          ]),
        ),
      ),
    ).to.equal(true);
    expect(Number.isNaN(valueOf(call('histogram_quantile', [scalar(0.5), classic([['+Inf', 3]])])))).to.equal(true);
  });

  it('answers ±Inf for q outside [0, 1] and NaN for NaN, with a warning', () => {
    const high = call('histogram_quantile', [scalar(1.5), buckets]);
    expect(valueOf(high)).to.equal(Infinity);
    expect(high.ok && high.value.annotations).to.deep.equal(['PromQL warning: quantile value should be between 0 and 1, got 1.5']);
    expect(valueOf(call('histogram_quantile', [scalar(-0.5), buckets]))).to.equal(-Infinity);
    expect(Number.isNaN(valueOf(call('histogram_quantile', [scalar(NaN), buckets])))).to.equal(true);
  });

  it('uses the lowest bound itself when it is not above zero', () => {
    expectClose(
      valueOf(
        call('histogram_quantile', [
          scalar(0.1),
          classic([
            ['-1', 5],
            ['1', 10],
            ['+Inf', 10],
          ]),
        ]),
      ),
      -1,
    );
  });

  it('forces monotonic bucket counts with an info', () => {
    // The 2 bucket's 8 is lifted to 10: rank 6 falls in the first bucket.
    const result = call('histogram_quantile', [
      scalar(0.5),
      classic([
        ['1', 10],
        ['2', 8],
        ['+Inf', 12],
      ]),
    ]);
    expectClose(valueOf(result), 0.6);
    // The fix (bound 2 raised by 2), for the evaluator to fold into one info per query, at the vector argument.
    expect(result.ok && result.value.monotonicityFixes).to.deep.equal([
      {
        text: 'PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)',
        arg: 1,
        minBucket: 2,
        maxBucket: 2,
        maxDiff: 2,
      },
    ]);
    expect(result.ok && result.value.annotations).to.equal(undefined);
  });

  it('skips a malformed le with a warning, and keeps groups apart', () => {
    const v = vector([
      [bucket('x'), 1],
      [bucket('1', 'a'), 1],
      [bucket('+Inf', 'a'), 2],
      [bucket('1', 'b'), 4],
      [bucket('+Inf', 'b'), 4],
    ]);
    const result = call('histogram_quantile', [scalar(0.5), v]);
    expect(vectorOf(result).map((e) => e.f)).to.deep.equal([1, 0.5]);
    // At the vector argument; without the metric name, which Prometheus only adds under delayed name removal.
    expect(result.ok && result.value.annotations).to.deep.equal([
      { text: 'PromQL warning: bucket label "le" is missing or has a malformed value of "x"', arg: 1 },
    ]);
    const named = call('histogram_quantile', [scalar(0.5), v], 60_000, 60_000, undefined, true);
    expect(named.ok && named.value.annotations).to.deep.equal([
      { text: 'PromQL warning: bucket label "le" is missing or has a malformed value of "x" for metric name "latency_bucket"', arg: 1 },
    ]);
  });

  it('interpolates native exponential buckets on a log scale', () => {
    expectClose(valueOf(call('histogram_quantile', [scalar(0.25), native()])), Math.SQRT2);
    expectClose(valueOf(call('histogram_quantile', [scalar(0.75), native()])), 2 * Math.SQRT2);
    expectClose(valueOf(call('histogram_quantile', [scalar(0.5), native()])), 2);
    expect(Number.isNaN(valueOf(call('histogram_quantile', [scalar(0.5), native(nativeHistogram(0, 0, []))])))).to.equal(true);
  });

  it('interpolates custom buckets linearly', () => {
    // Bounds 1, 5: buckets (-Inf,1] 2, (1,5] 6, (5,+Inf] 0; the median is 2 observations into (1,5].
    const nhcb = nativeHistogram(8, 20, [2, 6], 0, { schema: -53, customValues: [1, 5], zeroThreshold: 0 });
    expectClose(valueOf(call('histogram_quantile', [scalar(0.5), native(nhcb)])), 1 + 4 * (2 / 6));
    expectClose(valueOf(call('histogram_quantile', [scalar(0.1), native(nhcb)])), 0.4);
  });

  it('computes fractions of classic and native histograms', () => {
    expectClose(valueOf(call('histogram_fraction', [scalar(0), scalar(2), buckets])), 0.5);
    expectClose(valueOf(call('histogram_fraction', [scalar(0), scalar(3), buckets])), 0.75);
    expectClose(valueOf(call('histogram_fraction', [scalar(0), scalar(2), native()])), 0.5);
    expectClose(valueOf(call('histogram_fraction', [scalar(-Infinity), scalar(Infinity), native()])), 1);
    expectClose(valueOf(call('histogram_fraction', [scalar(3), scalar(2), native()])), 0);
  });

  it('reads count, sum, average and spread of native histograms only', () => {
    expectClose(valueOf(call('histogram_count', [native()])), 8);
    expectClose(valueOf(call('histogram_sum', [native()])), 20);
    expectClose(valueOf(call('histogram_avg', [native()])), 2.5);
    // Observations stand at the buckets' geometric midpoints √2 and √8 around the mean 2.5.
    const variance = (4 * (Math.SQRT2 - 2.5) ** 2 + 4 * (Math.sqrt(8) - 2.5) ** 2) / 8;
    expectClose(valueOf(call('histogram_stdvar', [native()])), variance);
    expectClose(valueOf(call('histogram_stddev', [native()])), Math.sqrt(variance));
    expect(vectorOf(call('histogram_count', [buckets]))).to.deep.equal([]);
    expect(only(call('histogram_count', [native()])).dropName).to.equal(true);
  });
});
