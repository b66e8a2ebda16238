// The evaluator against a table of "series loaded, query at time → answer",
// every expected answer worked out by hand from Prometheus 3's documented
// semantics (left-open windows, staleness, vector matching, aggregation).
import { expect } from 'chai';
import { instantQuery, parseQuery, rangeQuery } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import type { QueryOptions } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import type { FloatHistogram } from '../../../../../../api/compat/prometheus/engine/sample-source.ts';
import { MemorySource } from './support/memory-source.ts';
import { render } from './support/render.ts';

function store(): MemorySource {
  return new MemorySource()
    .load('http_requests_total{job="api",instance="a"}', '0+10x10')
    .load('http_requests_total{job="api",instance="b"}', '0+20x10')
    .load('http_requests_total{job="db",instance="a"}', '5+5x10')
    .load('up{job="api",instance="a"}', '1x10')
    .load('up{job="api",instance="b"}', '0x10')
    .load('up{job="db",instance="a"}', '1x10')
    .load('build_info{instance="a",version="1.0"}', '1x10')
    .load('build_info{instance="b",version="2.0"}', '1x10')
    .load('stale_metric{job="s"}', '1 2 stale 4')
    .load('gap{job="g"}', '1 _ _ _ _ _ _ 8')
    .load('my.metric{"my.label"="x"}', '7x10')
    .load('nan_metric{i="1"}', 'NaN')
    .load('nan_metric{i="2"}', '3')
    .load('nan_metric{i="3"}', '1');
}

async function instant(query: string, atSec: number, options: QueryOptions = {}): Promise<string[]> {
  const parsed = parseQuery(query);
  if (!parsed.ok) return [`error ${parsed.error.type}: ${parsed.error.message}`];
  const r = await instantQuery(store(), parsed.value, atSec * 1000, options);
  return r.ok ? render(r.value.value) : [`error ${r.error.type}: ${r.error.message}`];
}

async function range(query: string, startSec: number, endSec: number, stepSec: number): Promise<string[]> {
  const parsed = parseQuery(query);
  if (!parsed.ok) return [`error ${parsed.error.type}: ${parsed.error.message}`];
  const r = await rangeQuery(store(), parsed.value, startSec * 1000, endSec * 1000, stepSec * 1000);
  return r.ok ? render(r.value.value) : [`error ${r.error.type}: ${r.error.message}`];
}

const sorted = (lines: string[]): string[] => [...lines].sort();

// [query, time (s), answer lines; `ordered` when the order is part of the answer]
type Case = readonly [string, number, readonly string[], 'ordered'?];

const cases: readonly Case[] = [
  // Selectors, lookback (t - 5m, t], staleness, offset, @.
  ['http_requests_total{job="api"}', 300, ['http_requests_total{instance="a",job="api"} 50', 'http_requests_total{instance="b",job="api"} 100']],
  ['gap', 299, ['gap{job="g"} 1']],
  ['gap', 300, []],
  ['gap', 420, ['gap{job="g"} 8']],
  ['stale_metric', 119, ['stale_metric{job="s"} 2']],
  ['stale_metric', 150, []],
  ['stale_metric', 180, ['stale_metric{job="s"} 4']],
  ['http_requests_total{job="api",instance="a"} offset 2m', 300, ['http_requests_total{instance="a",job="api"} 30']],
  ['http_requests_total{job="api",instance="a"} offset -1m', 300, ['http_requests_total{instance="a",job="api"} 60']],
  ['http_requests_total{job="api",instance="a"} @ 120', 600, ['http_requests_total{instance="a",job="api"} 20']],
  ['http_requests_total{job="api",instance="a"} @ 180 offset 1m', 600, ['http_requests_total{instance="a",job="api"} 20']],
  ['http_requests_total{job="api",instance="a"} @ start()', 240, ['http_requests_total{instance="a",job="api"} 40']],
  ['{"my.metric", "my.label"="x"}', 60, ['my.metric{my.label="x"} 7']],
  // Range windows (t - range, t]; a range selector by itself answers its raw points.
  ['count_over_time(http_requests_total{job="api",instance="a"}[2m])', 300, ['{instance="a",job="api"} 2']],
  ['http_requests_total{job="api",instance="a"}[2m]', 300, ['http_requests_total{instance="a",job="api"} 240=40 300=50']],
  ['rate(http_requests_total{job="api",instance="a"}[5m])', 600, ['{instance="a",job="api"} 0.1666666667']],
  ['last_over_time(http_requests_total{job="api",instance="a"}[1m] offset 1m)', 300, ['http_requests_total{instance="a",job="api"} 40']],
  // Subqueries: aligned to their step, left-open, default step 1m.
  ['max_over_time(http_requests_total{job="api",instance="a"}[5m:1m])', 300, ['{instance="a",job="api"} 50']],
  ['count_over_time(http_requests_total{job="api",instance="a"}[5m:1m])', 300, ['{instance="a",job="api"} 5']],
  ['count_over_time(http_requests_total{job="api",instance="a"}[5m:])', 300, ['{instance="a",job="api"} 5']],
  ['max_over_time(http_requests_total{job="api",instance="a"}[2m:1m] offset 1m)', 300, ['{instance="a",job="api"} 40']],
  // Steps 180 and 270 (aligned to 90s, after 300 - 3m): 90 + 120.
  ['sum_over_time(sum(http_requests_total{job="api"})[3m:90s])', 300, ['{} 210']],
  ['up{job="db"} + up{job="db"} offset 1m', 60, ['{instance="a",job="db"} 2']],
  ['sum(up) + sum(up @ 0)', 60, ['{} 4']],
  // Scalars, strings, precedence, unary minus.
  ['2 + 3 * 4', 0, ['scalar 14']],
  ['2 ^ 3 ^ 2', 0, ['scalar 512']],
  ['-2 ^ 2', 0, ['scalar -4']],
  ['1 - 2 - 3', 0, ['scalar -4']],
  ['(2 + 3) * 4', 0, ['scalar 20']],
  ['5 % 3 + 2 == bool 4', 0, ['scalar 1']],
  ['time()', 300, ['scalar 300']],
  ['"hello"', 10, ['string hello']],
  ['-up{job="db"}', 60, ['{instance="a",job="db"} -1']],
  // Binary operators between vectors and with scalars.
  ['http_requests_total > 40', 300, ['http_requests_total{instance="a",job="api"} 50', 'http_requests_total{instance="b",job="api"} 100']],
  ['http_requests_total > bool 40', 300, ['{instance="a",job="api"} 1', '{instance="a",job="db"} 0', '{instance="b",job="api"} 1']],
  ['40 < http_requests_total', 300, ['http_requests_total{instance="a",job="api"} 50', 'http_requests_total{instance="b",job="api"} 100']],
  ['2 * up{job="db"}', 60, ['{instance="a",job="db"} 2']],
  ['http_requests_total / on(instance, job) up', 300, ['{instance="a",job="api"} 50', '{instance="a",job="db"} 30', '{instance="b",job="api"} Infinity']],
  ['http_requests_total - ignoring(job) group_left build_info', 300, []],
  [
    'http_requests_total - on(instance) group_left build_info',
    300,
    ['{instance="a",job="api"} 49', '{instance="a",job="db"} 29', '{instance="b",job="api"} 99'],
  ],
  [
    'http_requests_total{job="api"} * on(instance) group_left(version) build_info',
    300,
    ['{instance="a",job="api",version="1.0"} 50', '{instance="b",job="api",version="2.0"} 100'],
  ],
  ['build_info * on(instance) group_right http_requests_total{job="api"}', 300, ['{instance="a",job="api"} 50', '{instance="b",job="api"} 100']],
  ['up == on(instance, job) http_requests_total', 0, ['{instance="b",job="api"} 0']],
  [
    'http_requests_total * on(instance) build_info',
    300,
    ['error execution: multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)'],
  ],
  [
    'build_info * on(instance) group_left http_requests_total',
    300,
    [
      'error execution: found duplicate series for the match group {instance="a"} on the right hand-side of the operation: [{__name__="http_requests_total", instance="a", job="api"}, {__name__="http_requests_total", instance="a", job="db"}];many-to-many matching not allowed: matching labels must be unique on one side',
    ],
  ],
  // Set operators.
  ['up and http_requests_total{job="db"}', 60, ['up{instance="a",job="db"} 1']],
  ['up unless on(job) http_requests_total{job="db"}', 60, ['up{instance="a",job="api"} 1', 'up{instance="b",job="api"} 0']],
  [
    'up{job="db"} or http_requests_total{job="api"}',
    60,
    ['http_requests_total{instance="a",job="api"} 10', 'http_requests_total{instance="b",job="api"} 20', 'up{instance="a",job="db"} 1'],
  ],
  ['up{job="db"} or on(instance) http_requests_total', 60, ['http_requests_total{instance="b",job="api"} 20', 'up{instance="a",job="db"} 1']],
  // Aggregations.
  ['sum by (job) (http_requests_total)', 300, ['{job="api"} 150', '{job="db"} 30']],
  ['sum without (instance) (http_requests_total)', 300, ['{job="api"} 150', '{job="db"} 30']],
  ['sum(http_requests_total) by (job)', 300, ['{job="api"} 150', '{job="db"} 30']],
  ['sum by (__name__) (http_requests_total)', 300, ['http_requests_total 180']],
  ['avg by (job) (http_requests_total)', 300, ['{job="api"} 75', '{job="db"} 30']],
  ['count by (job) (http_requests_total)', 300, ['{job="api"} 2', '{job="db"} 1']],
  ['min by (job) (http_requests_total)', 300, ['{job="api"} 50', '{job="db"} 30']],
  ['max(http_requests_total)', 300, ['{} 100']],
  ['group by (job) (http_requests_total)', 300, ['{job="api"} 1', '{job="db"} 1']],
  ['stddev by (job) (http_requests_total)', 300, ['{job="api"} 25', '{job="db"} 0']],
  ['stdvar by (job) (http_requests_total)', 300, ['{job="api"} 625', '{job="db"} 0']],
  ['quantile(0.5, http_requests_total)', 300, ['{} 50']],
  ['quantile(0.9, http_requests_total)', 300, ['{} 90']],
  ['count_values("value", up)', 300, ['{value="0"} 1', '{value="1"} 2']],
  ['count_values by (job) ("v", up)', 300, ['{job="api",v="0"} 1', '{job="api",v="1"} 1', '{job="db",v="1"} 1']],
  ['topk(2, http_requests_total)', 300, ['http_requests_total{instance="b",job="api"} 100', 'http_requests_total{instance="a",job="api"} 50'], 'ordered'],
  ['bottomk(1, http_requests_total)', 300, ['http_requests_total{instance="a",job="db"} 30']],
  ['topk by (job) (1, http_requests_total)', 300, ['http_requests_total{instance="a",job="db"} 30', 'http_requests_total{instance="b",job="api"} 100']],
  ['topk(3, nan_metric)', 0, ['nan_metric{i="2"} 3', 'nan_metric{i="3"} 1', 'nan_metric{i="1"} NaN'], 'ordered'],
  ['bottomk(3, nan_metric)', 0, ['nan_metric{i="3"} 1', 'nan_metric{i="2"} 3', 'nan_metric{i="1"} NaN'], 'ordered'],
  ['topk(0, up)', 0, []],
  ['max(nan_metric)', 0, ['{} 3']],
  // Functions the engine treats specially, and name removal.
  ['absent(nonexistent{job="x"})', 60, ['{job="x"} 1']],
  ['absent(up)', 60, []],
  ['vector(1)', 60, ['{} 1']],
  ['scalar(up{job="db"})', 60, ['scalar 1']],
  ['timestamp(gap)', 299, ['{job="g"} 0']],
  ['rate({__name__=~"http_requests_total|up"}[5m])', 600, ['error execution: vector cannot contain metrics with the same labelset']],
  ['-{__name__=~"http_requests_total|up"}', 60, ['error execution: vector cannot contain metrics with the same labelset']],
];

describe('PromQL evaluator', () => {
  for (const [query, at, expected, ordered] of cases) {
    it(`${query} at ${at}s`, async () => {
      const got = await instant(query, at);
      expect(ordered === 'ordered' ? got : sorted(got)).to.deep.equal(ordered === 'ordered' ? expected : sorted([...expected]));
    });
  }

  it('answers a range query as a matrix sorted by labels, one point per step', async () => {
    expect(await range('sum(http_requests_total{job="api"})', 0, 300, 60)).to.deep.equal(['{} 0=0 60=30 120=60 180=90 240=120 300=150']);
    expect(await range('stale_metric', 0, 240, 60)).to.deep.equal(['stale_metric{job="s"} 0=1 60=2 180=4 240=4']);
    expect(await range('topk(1, http_requests_total)', 0, 120, 60)).to.deep.equal([
      'http_requests_total{instance="a",job="db"} 0=5',
      'http_requests_total{instance="b",job="api"} 60=20 120=40',
    ]);
    expect(await range('1 + 1', 0, 120, 60)).to.deep.equal(['{} 0=2 60=2 120=2']);
  });

  it("pins @ start() and @ end() to the range query's ends at every step", async () => {
    expect(await range('http_requests_total{job="api",instance="a"} @ end()', 0, 120, 60)).to.deep.equal([
      'http_requests_total{instance="a",job="api"} 0=20 60=20 120=20',
    ]);
    expect(await range('sum(http_requests_total{job="api"} @ start())', 60, 180, 60)).to.deep.equal(['{} 60=30 120=30 180=30']);
  });

  it("refuses a range vector as a range query's answer", async () => {
    expect(await range('up[5m]', 0, 60, 60)).to.deep.equal([
      'error bad_data: invalid expression type "range vector" for range query, must be Scalar or instant Vector',
    ]);
  });
});

describe('PromQL evaluator over native histograms', () => {
  const h = (count: number, sum: number, buckets: number[]): FloatHistogram => ({
    counterResetHint: 'gauge',
    schema: 0,
    zeroThreshold: 0.001,
    zeroCount: 0,
    count,
    sum,
    positiveSpans: [{ offset: 0, length: buckets.length }],
    positiveBuckets: buckets,
    negativeSpans: [],
    negativeBuckets: [],
  });
  const source = (): MemorySource =>
    new MemorySource().loadValues('lat{job="a"}', [h(3, 6, [1, 2]), h(4, 8, [2, 2])]).loadValues('lat{job="b"}', [h(1, 1, [1, 0]), h(2, 3, [1, 1])]);
  const at = async (q: string, t: number): Promise<string[]> => {
    const p = parseQuery(q);
    if (!p.ok) return [p.error.message];
    const r = await instantQuery(source(), p.value, t * 1000);
    return r.ok ? render(r.value.value) : [`error ${r.error.type}: ${r.error.message}`];
  };

  it('sums, scales and subtracts histograms, and ignores them where Prometheus does', async () => {
    expect(await at('sum(lat)', 60)).to.deep.equal(['{} h(count=6,sum=11)']);
    expect(await at('lat{job="a"} * 2', 60)).to.deep.equal(['{job="a"} h(count=8,sum=16)']);
    expect(await at('lat{job="a"} - ignoring(job) lat{job="b"}', 60)).to.deep.equal(['{} h(count=2,sum=5)']);
    expect(await at('avg(lat)', 0)).to.deep.equal(['{} h(count=2,sum=3.5)']);
    expect(await at('max(lat)', 0)).to.deep.equal([]);
    expect(await at('lat{job="a"} + 1', 0)).to.deep.equal([]);
  });
});
