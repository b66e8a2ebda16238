// Timeseries arithmetic against numbers worked out by hand.
import { expect } from 'chai';
import { exponentialQuantile, histogramQuantile, seriesValues } from '../../../api/v1/timeseries/series-math.ts';
import type { RawPoint } from '../../../api/v1/timeseries/series-math.ts';
import { planBuckets } from '../../../api/v1/timeseries/bucket-plan.ts';

const point = (p: Partial<RawPoint> & { ms: number }): RawPoint => ({
  stream: 's1',
  temporality: 'cumulative',
  value: 0,
  count: 0,
  sum: 0,
  min: null,
  max: null,
  bucket_counts: [],
  explicit_bounds: [],
  exp_scale: 0,
  exp_zero_count: 0,
  exp_positive_offset: 0,
  exp_positive_bucket_counts: [],
  exp_negative_offset: 0,
  exp_negative_bucket_counts: [],
  quantiles: [],
  quantile_values: [],
  ...p,
});

describe('api/timeseries series math', () => {
  it('takes p95 from explicit buckets by linear interpolation', () => {
    // bounds 10, 20, 50, 100; counts 10, 20, 30, 30, 10 (total 100). Rank 95 falls in (50, 100] which holds
    // ranks 61..90? No: cumulative 10, 30, 60, 90, 100 → rank 95 is in the overflow bucket → highest bound 100.
    expect(histogramQuantile(0.95, [10, 20, 50, 100], [10, 20, 30, 30, 10])).to.equal(100);
    // Rank 50 is in (20, 50]: 20 + 30 * (50 - 30) / 30 = 40.
    expect(histogramQuantile(0.5, [10, 20, 50, 100], [10, 20, 30, 30, 10])).to.equal(40);
    // Rank 95 of counts 0, 50, 40, 10 with bounds 1, 2, 4 → in (2, 4]: 2 + 2 * (95 - 50) / 40 = 4.25? no: (2,4] holds 51..90;
    // cumulative 0, 50, 90, 100 → rank 95 is in the overflow → 4.
    expect(histogramQuantile(0.95, [1, 2, 4], [0, 50, 40, 10])).to.equal(4);
    // First bucket starts at 0: rank 5 of 10 in [0, 10] → 5.
    expect(histogramQuantile(0.5, [10], [10, 0])).to.equal(5);
    expect(histogramQuantile(0.5, [10], [0, 0])).to.equal(null);
  });

  it('takes quantiles from exponential buckets', () => {
    // scale 0: base 2; positive bucket i holds (2^i, 2^(i+1)]. Buckets 1 → (2,4] ×10, 2 → (4,8] ×10.
    // Rank 15 of 20 → bucket (4,8], halfway: 4 + 4 * 5/10 = 6.
    expect(
      exponentialQuantile(
        0.75,
        0,
        0,
        new Map([
          [1, 10],
          [2, 10],
        ]),
        new Map(),
      ),
    ).to.equal(6);
    // Negative values come first: bucket -(2,4] ×10 and zero ×10 → rank 5 → -4 + 2 * 5/10 = -3.
    expect(exponentialQuantile(0.25, 0, 10, new Map(), new Map([[1, 10]]))).to.equal(-3);
  });

  it('computes increase and rate across a counter reset', () => {
    const plan = planBuckets(0, 120_000, 60);
    if (!plan.ok) throw new Error(plan.error.message);
    // Cumulative counter: 100 (lookback, before start) → 130 → 160 | reset → 20 → 50.
    const points = [
      point({ ms: -10_000, value: 100 }),
      point({ ms: 10_000, value: 130 }),
      point({ ms: 50_000, value: 160 }),
      point({ ms: 70_000, value: 20 }),
      point({ ms: 110_000, value: 50 }),
    ];
    // Bucket 0: 30 + 30 = 60; bucket 1: reset contributes 20, then 30 → 50.
    expect(seriesValues('sum', 'increase', points, plan.value, 0)).to.deep.equal([60, 50]);
    expect(seriesValues('sum', 'rate', points, plan.value, 0)).to.deep.equal([1, 50 / 60]);
  });

  it('keeps streams apart and leaves empty buckets null (count 0)', () => {
    const plan = planBuckets(0, 180_000, 60);
    if (!plan.ok) throw new Error(plan.error.message);
    const points = [
      point({ stream: 'a', ms: 1000, value: 10 }),
      point({ stream: 'a', ms: 2000, value: 15 }),
      point({ stream: 'b', ms: 1500, value: 1000 }),
      point({ stream: 'b', ms: 2500, value: 1001 }),
    ];
    expect(seriesValues('sum', 'increase', points, plan.value, 0)).to.deep.equal([6, null, null]);
    expect(seriesValues('histogram', 'count', [], plan.value, 0)).to.deep.equal([0, 0, 0]);
  });

  it('adds delta histograms and subtracts cumulative ones before taking quantiles', () => {
    const plan = planBuckets(0, 60_000, 60);
    if (!plan.ok) throw new Error(plan.error.message);
    const bounds = [10, 20, 50, 100];
    const delta = [
      point({ ms: 1000, temporality: 'delta', count: 50, sum: 1000, explicit_bounds: bounds, bucket_counts: [5, 10, 15, 15, 5] }),
      point({ ms: 2000, temporality: 'delta', count: 50, sum: 2000, explicit_bounds: bounds, bucket_counts: [5, 10, 15, 15, 5] }),
    ];
    expect(seriesValues('histogram', 'p50', delta, plan.value, 0)).to.deep.equal([40]);
    expect(seriesValues('histogram', 'avg', delta, plan.value, 0)).to.deep.equal([30]);
    expect(seriesValues('histogram', 'count', delta, plan.value, 0)).to.deep.equal([100]);
    const cumulative = [
      point({ ms: -1000, count: 10, sum: 100, explicit_bounds: bounds, bucket_counts: [10, 0, 0, 0, 0] }),
      point({ ms: 5000, count: 110, sum: 3100, explicit_bounds: bounds, bucket_counts: [20, 20, 30, 30, 10] }),
    ];
    // Delta: counts 10, 20, 30, 30, 10; sum 3000 → avg 30, p50 = 40.
    expect(seriesValues('histogram', 'p50', cumulative, plan.value, 0)).to.deep.equal([40]);
    expect(seriesValues('histogram', 'avg', cumulative, plan.value, 0)).to.deep.equal([30]);
  });

  it('averages summary quantiles of the bucket', () => {
    const plan = planBuckets(0, 60_000, 60);
    if (!plan.ok) throw new Error(plan.error.message);
    const points = [
      point({ ms: 1000, quantiles: [0.5, 0.95], quantile_values: [10, 90] }),
      point({ ms: 2000, quantiles: [0.5, 0.95], quantile_values: [20, 110] }),
    ];
    expect(seriesValues('summary', 'p95', points, plan.value, 0)).to.deep.equal([100]);
    expect(seriesValues('summary', 'p99', points, plan.value, 0)).to.deep.equal([null]);
  });
});
