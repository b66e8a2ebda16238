// Quantile edges the engine differential found against Prometheus 3.16: a
// rank that lands exactly on a value answers that value (no interpolation
// with an infinite neighbour), and a native histogram's empty negative
// buckets still make its zero bucket reach below zero.
import { expect } from 'chai';
import { quantileOf } from '../../../../../../../api/compat/prometheus/engine/functions/quantile.ts';
import type { FloatHistogram } from '../../../../../../../api/compat/prometheus/engine/sample-source.ts';
import type { StepArg } from '../../../../../../../api/compat/prometheus/engine/functions/function-types.ts';
import { call, expectClose, floats, nativeHistogram, scalar, valueOf } from './call-function.ts';

const native = (h: FloatHistogram): StepArg => ({
  type: 'vector',
  value: [
    {
      labels: [
        ['__name__', 'latency'],
        ['job', 'api'],
      ],
      t: 60_000,
      f: 0,
      h,
    },
  ],
});

describe('PromQL quantiles on a rank and around the zero bucket', () => {
  it('answers the value on the rank itself, so an infinite neighbour does not make it NaN', () => {
    // Sorted: NaN, -Inf, 0, 0, +Inf; rank 0.5 × 4 = 2 is the first 0 (0 × 1 + Inf × 0 would be NaN).
    expect(quantileOf(0.5, [NaN, Infinity, -Infinity, 0, 0])).to.equal(0);
    expect(quantileOf(0, [3, -Infinity, 1])).to.equal(-Infinity);
    expect(quantileOf(1, [3, Infinity, 1])).to.equal(Infinity);
    // Between ranks it still interpolates.
    expectClose(quantileOf(0.25, [1, 2, 3]), 1.5);
  });

  it('answers -Inf for quantile_over_time of a series that is always -Inf', () => {
    const w = floats([
      [10, -Infinity],
      [20, -Infinity],
      [30, -Infinity],
    ]);
    expect(valueOf(call('quantile_over_time', [scalar(0.5), w]))).to.equal(-Infinity);
    expect(valueOf(call('quantile_over_time', [scalar(0.3), w]))).to.equal(-Infinity);
  });

  // Schema 1, zero threshold 0.001: 1 observation in the zero bucket, 6 in
  // positive buckets; with or without four empty negative buckets (a counter
  // just reset keeps its layout, as Prometheus' TSDB does).
  const positiveOnly = nativeHistogram(7, 10, [2, 2, 2], 1, { schema: 1, zeroCount: 1 });
  const withEmptyNegatives = { ...positiveOnly, negativeSpans: [{ offset: 1, length: 4 }], negativeBuckets: [0, 0, 0, 0] };

  it('interpolates the zero bucket from -threshold when empty negative buckets exist, from 0 when none do', () => {
    // Rank 0.1 × 7 = 0.7 falls in the zero bucket, 0.7 of the way through.
    expectClose(valueOf(call('histogram_quantile', [scalar(0.1), native(withEmptyNegatives)])), -0.001 + 0.002 * 0.7);
    expectClose(valueOf(call('histogram_quantile', [scalar(0.1), native(positiveOnly)])), 0.001 * 0.7);
  });

  it('counts half the zero bucket below 0 in histogram_fraction only when negative buckets exist', () => {
    expectClose(valueOf(call('histogram_fraction', [scalar(-1), scalar(0), native(withEmptyNegatives)])), 0.5 / 7);
    expectClose(valueOf(call('histogram_fraction', [scalar(-1), scalar(0), native(positiveOnly)])), 0);
  });
});
