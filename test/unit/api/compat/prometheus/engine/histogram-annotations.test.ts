// histogram_quantile's annotations through the engine, in Prometheus 3.16's
// words and places: bucket notes at the vector argument, the quantile warning
// at the first, the monotonicity info folded into one per query with
// Prometheus' own (doubling) sample count, and Go's %g for the numbers.
import { expect } from 'chai';
import { instantQuery, parseQuery, rangeQuery } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import { formatGoG } from '../../../../../../api/compat/prometheus/engine/functions/go-float-format.ts';
import { MemorySource } from './support/memory-source.ts';

const fixed =
  'PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)';

function store(): MemorySource {
  return (
    new MemorySource()
      // The le="1" bucket counts 3 fewer than le="0.1" in group a, 0.5 fewer than le="0.5" in group b.
      .load('skew_bucket{g="a",le="0.1"}', '10x10')
      .load('skew_bucket{g="a",le="1"}', '7x10')
      .load('skew_bucket{g="a",le="+Inf"}', '12x10')
      .load('skew_bucket{g="b",le="0.5"}', '4.5x10')
      .load('skew_bucket{g="b",le="1"}', '4x10')
      .load('skew_bucket{g="b",le="+Inf"}', '6x10')
      .load('noble{g="a"}', '1x10')
  );
}

async function notes(query: string, at: { readonly instant: number } | { readonly start: number; readonly end: number }): Promise<string[]> {
  const parsed = parseQuery(query);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const r =
    'instant' in at
      ? await instantQuery(store(), parsed.value, at.instant * 1000)
      : await rangeQuery(store(), parsed.value, at.start * 1000, at.end * 1000, 60_000);
  if (!r.ok) throw new Error(r.error.message);
  return [...r.value.annotations].sort();
}

describe('PromQL histogram_quantile annotations', () => {
  it('folds one step’s fixes into one info at the vector argument, inside its parentheses', async () => {
    expect(await notes('histogram_quantile(0.9, ((skew_bucket)))', { instant: 60 })).to.deep.equal([
      `${fixed}, from buckets 1 to 1, with a max diff of 3, over 2 samples from 1970-01-01T00:01:00Z to 1970-01-01T00:01:00Z (1:27)`,
    ]);
  });

  it('counts samples over a range as Prometheus does: doubled at every later step', async () => {
    // One fix at each of 11 steps: 1, 2·(1+1), 2·(4+1), … 3070.
    expect(await notes('histogram_quantile(0.9, skew_bucket{g="a"})', { start: 0, end: 600 })).to.deep.equal([
      `${fixed}, from buckets 1 to 1, with a max diff of 3, over 3070 samples from 1970-01-01T00:00:00Z to 1970-01-01T00:10:00Z (1:25)`,
    ]);
  });

  it('wraps the sample count at 64 bits on a long range, as Go’s int does', async () => {
    // Fixes at the 15 steps to 14:00 (the last sample's lookback), then 86 more steps: the count's bits all end up set, -1, printed plus one.
    const [info] = await notes('histogram_quantile(0.9, skew_bucket{g="a"})', { start: 0, end: 6000 });
    expect(info).to.contain(', over 0 samples from 1970-01-01T00:00:00Z to 1970-01-01T00:14:00Z (1:25)');
  });

  it('adds up two calls, keeping the first call’s position', async () => {
    const [info] = await notes('histogram_quantile(0.9, skew_bucket{g="b"}) + histogram_quantile(0.5, skew_bucket{g="a"})', { instant: 60 });
    expect(info).to.equal(`${fixed}, from buckets 1 to 1, with a max diff of 3, over 2 samples from 1970-01-01T00:01:00Z to 1970-01-01T00:01:00Z (1:25)`);
  });

  it('places the bucket label warning at the vector argument without the metric name, the quantile warning at the first', async () => {
    expect(await notes('histogram_quantile(1.5, noble)', { instant: 60 })).to.deep.equal([
      'PromQL warning: bucket label "le" is missing or has a malformed value of "" (1:25)',
      'PromQL warning: quantile value should be between 0 and 1, got 1.5 (1:20)',
    ]);
  });

  it('keys a warning by its text alone: raised at two places, it is one warning at the last place', async () => {
    expect(await notes('histogram_quantile(1.5, noble) + histogram_quantile(1.5, noble)', { instant: 60 })).to.deep.equal([
      'PromQL warning: bucket label "le" is missing or has a malformed value of "" (1:58)',
      'PromQL warning: quantile value should be between 0 and 1, got 1.5 (1:53)',
    ]);
  });

  it('prints numbers as Go’s %g and %.2g do', () => {
    const cases: readonly (readonly [number, string, string])[] = [
      [0.05, '0.05', '0.05'],
      [150, '150', '1.5e+02'],
      [1.25, '1.25', '1.2'],
      [99.5, '99.5', '1e+02'],
      [1e6, '1e+06', '1e+06'],
      [1234567, '1.234567e+06', '1.2e+06'],
      [123456, '123456', '1.2e+05'],
      [0.000012, '1.2e-05', '1.2e-05'],
      [1 / 3, '0.3333333333333333', '0.33'],
      [0.0125, '0.0125', '0.013'],
      [10, '10', '10'],
      [Infinity, '+Inf', '+Inf'],
    ];
    for (const [x, g, g2] of cases) expect([formatGoG(x), formatGoG(x, 2)], String(x)).to.deep.equal([g, g2]);
  });
});
