// The *_over_time family, changes, resets, deriv and predict_linear at one
// step, with expectations worked out by hand from Prometheus' definitions.
import { expect } from 'chai';
import { call, expectClose, floats, histograms, nativeHistogram, only, scalar, valueOf, vectorOf } from './call-function.ts';

describe('PromQL over-time functions', () => {
  it('averages, sums, counts and bounds the window', () => {
    const w = floats([
      [10, 1],
      [20, 2],
      [30, 6],
    ]);
    expectClose(valueOf(call('avg_over_time', [w])), 3);
    expectClose(valueOf(call('sum_over_time', [w])), 9);
    expectClose(valueOf(call('count_over_time', [w])), 3);
    expectClose(valueOf(call('min_over_time', [w])), 1);
    expectClose(valueOf(call('max_over_time', [w])), 6);
    expectClose(valueOf(call('last_over_time', [w])), 6);
    expectClose(valueOf(call('present_over_time', [w])), 1);
    expect(only(call('sum_over_time', [w])).dropName).to.equal(true);
  });

  it('keeps the metric name for last_over_time', () => {
    expect(only(call('last_over_time', [floats([[10, 1]])])).dropName).to.equal(false);
  });

  it('sums with compensation and averages without overflowing', () => {
    expectClose(
      valueOf(
        call('sum_over_time', [
          floats([
            [10, 1e16],
            [20, 1],
            [30, -1e16],
          ]),
        ]),
      ),
      1,
    );
    expectClose(
      valueOf(
        call('avg_over_time', [
          floats([
            [10, 1.7e308],
            [20, 1.7e308],
          ]),
        ]),
      ),
      1.7e308,
    );
    expect(
      valueOf(
        call('sum_over_time', [
          floats([
            [10, 1.7e308],
            [20, 1.7e308],
          ]),
        ]),
      ),
    ).to.equal(Infinity);
  });

  it('computes the population standard deviation and variance', () => {
    const w = floats([
      [1, 2],
      [2, 4],
      [3, 4],
      [4, 4],
      [5, 5],
      [6, 5],
      [7, 7],
      [8, 9],
    ]);
    expectClose(valueOf(call('stdvar_over_time', [w])), 4);
    expectClose(valueOf(call('stddev_over_time', [w])), 2);
  });

  it('interpolates quantiles between ranks and answers ±Inf outside [0, 1] with a warning', () => {
    const w = floats([
      [10, 4],
      [20, 1],
      [30, 3],
      [40, 2],
    ]);
    expectClose(valueOf(call('quantile_over_time', [scalar(0.5), w])), 2.5);
    expectClose(valueOf(call('quantile_over_time', [scalar(0.9), w])), 3.7);
    const high = call('quantile_over_time', [scalar(2), w]);
    expect(valueOf(high)).to.equal(Infinity);
    expect(high.ok && high.value.annotations).to.deep.equal(['PromQL warning: quantile value should be between 0 and 1, got 2']);
    expect(valueOf(call('quantile_over_time', [scalar(-1), w]))).to.equal(-Infinity);
  });

  it('lets any number win over NaN in min and max', () => {
    expectClose(
      valueOf(
        call('min_over_time', [
          floats([
            [10, NaN],
            [20, 3],
            [30, 1],
          ]),
        ]),
      ),
      1,
    );
    expectClose(
      valueOf(
        call('max_over_time', [
          floats([
            [10, 3],
            [20, NaN],
            [30, 1],
          ]),
        ]),
      ),
      3,
    );
    expect(Number.isNaN(valueOf(call('max_over_time', [floats([[10, NaN]])])))).to.equal(true);
  });

  it('counts changes (NaN to NaN is none) and resets', () => {
    expectClose(
      valueOf(
        call('changes', [
          floats([
            [1, 1],
            [2, 1],
            [3, 2],
            [4, 2],
            [5, NaN],
            [6, NaN],
            [7, 3],
          ]),
        ]),
      ),
      3,
    );
    expectClose(
      valueOf(
        call('resets', [
          floats([
            [1, 5],
            [2, 3],
            [3, 4],
            [4, 1],
          ]),
        ]),
      ),
      2,
    );
    expectClose(valueOf(call('changes', [floats([[1, 5]])])), 0);
  });

  it('fits a least-squares line for deriv and predict_linear', () => {
    const w = floats([
      [0, 0],
      [10, 10],
      [20, 20],
    ]);
    expectClose(valueOf(call('deriv', [w], 20_000, 30_000)), 1);
    // The line's value at the step (20 s) is 20; 10 s later it is 30.
    expectClose(valueOf(call('predict_linear', [w, scalar(10)], 20_000, 30_000)), 30);
    expectClose(
      valueOf(
        call(
          'deriv',
          [
            floats([
              [0, 1],
              [10, 3],
              [20, 2],
            ]),
          ],
          20_000,
          30_000,
        ),
      ),
      0.05,
    );
    expectClose(
      valueOf(
        call('deriv', [
          floats([
            [0, 5],
            [10, 5],
          ]),
        ]),
      ),
      0,
    );
    expect(vectorOf(call('deriv', [floats([[0, 5]])]))).to.deep.equal([]);
  });

  it('sums and averages native histograms, and counts them', () => {
    const w = histograms([
      [30, nativeHistogram(4, 10, [4])],
      [60, nativeHistogram(8, 20, [6, 2])],
    ]);
    const sum = only(call('sum_over_time', [w]));
    expect(sum.h?.count).to.equal(12);
    expect(sum.h?.positiveBuckets).to.deep.equal([10, 2]);
    const avg = only(call('avg_over_time', [w]));
    expect(avg.h?.count).to.equal(6);
    expect(avg.h?.sum).to.equal(15);
    expectClose(valueOf(call('count_over_time', [w])), 2);
    expect(vectorOf(call('max_over_time', [w]))).to.deep.equal([]);
  });

  it('answers absent_over_time from the selector matchers only when no series has a point', () => {
    const matchers = [
      { name: '__name__', op: '=' as const, value: 'up' },
      { name: 'job', op: '=' as const, value: 'a' },
      { name: 'env', op: '=~' as const, value: 'x' },
    ];
    const el = only(call('absent_over_time', [{ type: 'matrix', value: [] }], 60_000, 60_000, matchers));
    expect(el.labels).to.deep.equal([['job', 'a']]);
    expect(el.f).to.equal(1);
    expect(vectorOf(call('absent_over_time', [floats([[30, 1]])], 60_000, 60_000, matchers))).to.deep.equal([]);
  });
});
