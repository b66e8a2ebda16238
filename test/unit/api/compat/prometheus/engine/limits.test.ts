// What the engine reads and what it refuses: each selector's sample range
// before anything is read, the max-samples budget, cancellation and timeout.
import { expect } from 'chai';
import { instantQuery, parseQuery, rangeQuery, selectRanges } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import type { ParsedQuery } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import { MemorySource } from './support/memory-source.ts';

const parsed = (q: string): ParsedQuery => {
  const r = parseQuery(q);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

const ranges = (q: string, start: number, end: number): [number, number][] =>
  selectRanges(parsed(q), start, end, 300_000).map((r) => [r.request.minT, r.request.maxT]);

describe('PromQL engine limits', () => {
  it('says which samples each selector needs: lookback and ranges left-open, offsets, @ and subqueries', () => {
    expect(ranges('up', 1_000_000, 2_000_000)).to.deep.equal([[700_001, 2_000_000]]);
    expect(ranges('rate(up[5m] offset 1m)', 1_000_000, 2_000_000)).to.deep.equal([[640_001, 1_940_000]]);
    expect(ranges('up @ 100', 1_000_000, 2_000_000)).to.deep.equal([[-199_999, 100_000]]);
    expect(ranges('up offset -1m', 1_000_000, 1_000_000)).to.deep.equal([[760_001, 1_060_000]]);
    expect(ranges('max_over_time(rate(up[1m])[10m:1m] offset 2m)', 1_000_000, 2_000_000)).to.deep.equal([[220_001, 1_880_000]]);
    expect(ranges('max_over_time(up[10m:1m] @ end())', 1_000_000, 2_000_000)).to.deep.equal([[1_100_001, 2_000_000]]);
    expect(ranges('1 + time()', 0, 10)).to.deep.equal([]);
  });

  it('fetches each selector once for a whole range query, and a selector repeated over the same range once', async () => {
    // sum(up) looks back 5 m, rate(up[5m]) reads 5 m: the same request, read once.
    const source = new MemorySource().load('up{job="a"}', '1x100');
    const r = await rangeQuery(source, parsed('sum(up) + rate(up[5m])'), 0, 6_000_000, 60_000);
    expect(r.ok).to.equal(true);
    expect(source.requests.length).to.equal(1);
    const other = new MemorySource().load('up{job="a"}', '1x100');
    const r2 = await rangeQuery(other, parsed('sum(up) + rate(up[10m])'), 0, 6_000_000, 60_000);
    expect(r2.ok).to.equal(true);
    expect(other.requests.length).to.equal(2);
  });

  it('refuses a query that would hold more samples than the budget', async () => {
    const source = new MemorySource().load('up{job="a"}', '1x100').load('up{job="b"}', '1x100').load('up{job="c"}', '1x100');
    const over = await instantQuery(source, parsed('up'), 600_000, { maxSamples: 2 });
    expect(over.ok ? 'ok' : over.error).to.deep.equal({
      type: 'execution',
      message: 'query processing would load too many samples into memory in query execution',
    });
    const within = await instantQuery(source, parsed('up'), 600_000, { maxSamples: 3 });
    expect(within.ok).to.equal(true);
    const windows = await instantQuery(source, parsed('count_over_time(up[10m])'), 600_000, { maxSamples: 20 });
    expect(windows.ok ? 'ok' : windows.error.type).to.equal('execution');
    const range = await rangeQuery(source, parsed('sum(up)'), 0, 6_000_000, 60_000, { maxSamples: 250 });
    expect(range.ok ? 'ok' : range.error.type).to.equal('execution');
  });

  it('answers canceled or timeout when the signal aborts, as the signal says', async () => {
    const source = new MemorySource().load('up{job="a"}', '1x100');
    const cancelled = new AbortController();
    cancelled.abort();
    const c = await instantQuery(source, parsed('up'), 60_000, { signal: cancelled.signal });
    expect(c.ok ? 'ok' : c.error).to.deep.equal({ type: 'canceled', message: 'query was canceled in expression evaluation' });
    const timedOut = new AbortController();
    timedOut.abort(new DOMException('deadline', 'TimeoutError'));
    const t = await rangeQuery(source, parsed('up'), 0, 60_000, 1000, { signal: timedOut.signal });
    expect(t.ok ? 'ok' : t.error).to.deep.equal({ type: 'timeout', message: 'query timed out in expression evaluation' });
  });

  it('stops a long evaluation when its timeout fires mid-way', async () => {
    const source = new MemorySource();
    for (let i = 0; i < 200; i++) source.load(`m{i="${i}"}`, '0+1x1000', 15);
    const started = performance.now();
    const r = await rangeQuery(source, parsed('sum(rate(m[5m])) + sum(max_over_time(m[10m:15s]))'), 0, 15_000_000, 15_000, { signal: AbortSignal.timeout(50) });
    expect(r.ok ? 'ok' : r.error.type).to.equal('timeout');
    expect(performance.now() - started).to.be.below(5_000);
  });
});
