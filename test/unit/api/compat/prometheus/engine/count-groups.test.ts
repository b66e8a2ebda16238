// count and group over a range are counted series by series (the
// evaluator's countGroups), straight from the stored samples when their
// input is a selector: the same answer and the same sample budget as the
// step-by-step path, checked against aggregations that take that path
// (x ^ 0 is 1 for every float, NaN and ±Inf included).
import { expect } from 'chai';
import { parseQuery, rangeQuery } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import type { ParsedQuery, QueryOptions } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import type { ResultSeries } from '../../../../../../api/compat/prometheus/engine/values.ts';
import { MemorySource } from './support/memory-source.ts';

const parsed = (q: string): ParsedQuery => {
  const r = parseQuery(q);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

// Gaps, a staleness marker, NaN and ±Inf, samples off the step grid (every 45 s), a series that starts late.
const source = (): MemorySource =>
  new MemorySource()
    .load('up{job="a", pod="1"}', '1x30')
    .load('up{job="a", pod="2"}', '1 2 _ _ _ _ _ _ _ 3 stale 4 NaN Inf -Inf 5x10', 45)
    .load('up{job="b", pod="3"}', '0+1x20', 60, 600)
    .load('up{job="b", pod="4"}', '7 stale _ _ 8x5', 30)
    .load('other{job="a", pod="1"}', '1x30');

async function matrix(q: string, options: QueryOptions = {}): Promise<readonly ResultSeries[] | string> {
  const r = await rangeQuery(source(), parsed(q), 0, 1_800_000, 60_000, options);
  if (!r.ok) return r.error.type;
  return r.value.value.resultType === 'matrix' ? r.value.value.result : 'not a matrix';
}

describe('PromQL count and group over a range', () => {
  for (const [fast, stepwise] of [
    ['count by (job) (up)', 'sum by (job) (up ^ 0)'],
    ['count(up)', 'sum(up ^ 0)'],
    ['count without (pod) (up offset 2m)', 'sum without (pod) (up offset 2m ^ 0)'],
    ['group by (job) (up)', 'min by (job) (up ^ 0)'],
    ['count by (job) (up > 0)', 'sum by (job) ((up > 0) ^ 0)'],
  ] as const) {
    it(`${fast} answers as ${stepwise}`, async () => {
      const want = await matrix(stepwise);
      expect(want).to.be.an('array');
      expect(want.length).to.be.above(0);
      expect(await matrix(fast)).to.deep.equal(want);
    });
  }

  it("holds the selector's samples against the budget as the step-by-step path does", async () => {
    let limit = 1;
    while (typeof (await matrix('sum(up)', { maxSamples: limit })) === 'string') limit += 1;
    expect(await matrix('count(up)', { maxSamples: limit - 1 })).to.equal('execution');
    expect(await matrix('count(up)', { maxSamples: limit })).to.be.an('array');
    expect(await matrix('group(up)', { maxSamples: limit - 1 })).to.equal('execution');
  });
});
