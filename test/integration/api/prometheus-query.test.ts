// The Prometheus query API under /prometheus: instant and range queries of
// every supported construct over remote-write-shaped rows, against values
// worked out by hand in the comments (Prometheus 3 semantics: range and
// lookback windows are left-open, (t - range, t]).
import { expect } from 'chai';
import fc from 'fast-check';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { insertRows, metricRow, secondsNs } from './support/telemetry-rows.ts';
import type { MetricSpec } from './support/telemetry-rows.ts';
import { formatSampleValue } from '../../../api/compat/prometheus/prom-float.ts';

const rw = 'tenantry.prometheus.remote_write';
/** A whole hour an hour ago: inside the default retention, aligned for readable steps. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3600;
/** Prometheus' stale marker: a NaN with these bits. */
const staleBits = 0x7ff0000000000002n;

interface Series {
  name: string;
  labels: Record<string, string>;
  type?: string;
  job?: string;
  instance?: string;
  tenant?: string;
}

/** Rows as remote write stores them: labels in attributes, job and instance as resource attributes. */
function samples(s: Series, points: readonly (readonly [number, number])[]): Record<string, unknown>[] {
  return points
    .map(([t, v]) =>
      metricRow({
        tenant: s.tenant ?? 'acme',
        name: s.name,
        type: s.type ?? 'gauge',
        ns: secondsNs(T0) + BigInt(Math.round(t * 1000)) * 1_000_000n,
        value: v,
        resource: { 'service.name': s.job ?? 'api', 'service.instance.id': s.instance ?? 'host:9090' },
        attrs: s.labels,
      } satisfies MetricSpec),
    )
    .map((row) => ({ ...row, scope_name: rw }));
}

type VectorResult = { metric: Record<string, string>; value: [number, string] }[];
type MatrixResult = { metric: Record<string, string>; values: [number, string][] }[];

describe('api/prometheus query', () => {
  let h: Harness;
  const get = (path: string, params: Record<string, string | number>, key: string = keys.readAcme): Promise<Reply> =>
    h.call('GET', `/prometheus${path}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString()}`, { key });
  const instant = async (query: string, time: number, extra: Record<string, string | number> = {}): Promise<VectorResult> => {
    const reply = await get('/api/v1/query', { query, time: T0 + time, ...extra });
    expect(reply.status, reply.text).to.equal(200);
    return field(reply.body, 'data', 'result') as VectorResult;
  };
  const range = async (query: string, start: number, end: number, step: number): Promise<MatrixResult> => {
    const reply = await get('/api/v1/query_range', { query, start: T0 + start, end: T0 + end, step });
    expect(reply.status, reply.text).to.equal(200);
    expect(field(reply.body, 'data', 'resultType')).to.equal('matrix');
    return field(reply.body, 'data', 'result') as MatrixResult;
  };
  const values = (r: VectorResult): Record<string, string> => Object.fromEntries(r.map((s) => [JSON.stringify(s.metric), s.value[1]]));

  before(async () => {
    h = await startHarness('prometheus_query');
    await insertRows(h.store, 'metrics', [
      // A counter scraped every 15 s: 0, 10, ... 60 at t=0..60, reset to 5 at t=75, then 15 at 90.
      ...samples({ name: 'http_requests_total', type: 'sum', labels: { code: '200' } }, [
        [0, 0],
        [15, 10],
        [30, 20],
        [45, 30],
        [60, 40],
        [75, 5],
        [90, 15],
      ]),
      // A second counter, steady 1/s.
      ...samples({ name: 'http_requests_total', type: 'sum', labels: { code: '500' }, instance: 'host:9091' }, [
        [0, 100],
        [15, 115],
        [30, 130],
        [45, 145],
        [60, 160],
        [75, 175],
        [90, 190],
      ]),
      // A gauge that stops at t=30 (no marker), and one ended by a stale marker at t=30.
      ...samples({ name: 'temp', labels: { room: 'a' } }, [
        [0, 20],
        [15, 21],
        [30, 22],
      ]),
      ...samples({ name: 'temp', labels: { room: 'b' } }, [
        [0, 10],
        [15, 11],
      ]),
      // A classic histogram: cumulative buckets 0 at t=0, then 10, 30, 40, 40 (le 0.1, 0.5, 1, +Inf) at t=60.
      ...['0.1', '0.5', '1', '+Inf'].flatMap((le, i) =>
        samples({ name: 'lat_bucket', type: 'sum', labels: { le } }, [
          [0, 0],
          [60, [10, 30, 40, 40][i] ?? 0],
        ]),
      ),
      // A counter whose rows were all written twice (a retried write): 0, 30, 60 at 0, 30, 60.
      ...[0, 1].flatMap(() =>
        samples({ name: 'twice_total', type: 'sum', labels: {} }, [
          [0, 0],
          [30, 30],
          [60, 60],
        ]),
      ),
      // Another tenant's series of the same name.
      ...samples({ name: 'temp', labels: { room: 'secret' }, tenant: 'globex' }, [
        [0, 99],
        [15, 99],
      ]),
    ]);
    // The stale marker's exact NaN bits: JSON has no NaN, so it is written by SQL as remote write stores it.
    await h.store.client.command({
      query: `INSERT INTO ${h.store.database}.metrics (tenant_id, metric_name, metric_type, scope_name, resource_attributes, attributes, timestamp, value)
        SELECT 'acme', 'temp', 'gauge', {rw:String}, map('service.name', 'api', 'service.instance.id', 'host:9090'), map('room', 'b'),
          fromUnixTimestamp64Milli({t:Int64}), reinterpretAsFloat64(toUInt64({bits:String}))`,
      query_params: { rw, t: (T0 + 30) * 1000, bits: staleBits.toString() },
    });
  });
  after(async () => {
    await h.close();
  });

  it('answers an instant vector selector with its labels, __name__, job and instance', async () => {
    const r = await instant('temp', 20);
    expect(r).to.deep.equal([
      { metric: { __name__: 'temp', instance: 'host:9090', job: 'api', room: 'a' }, value: [T0 + 20, '21'] },
      { metric: { __name__: 'temp', instance: 'host:9090', job: 'api', room: 'b' }, value: [T0 + 20, '11'] },
    ]);
  });

  it('answers empty results for names that match nothing', async () => {
    expect(await instant('nonexistent_metric_name', 20)).to.deep.equal([]);
    expect(await instant('sum(rate(nonexistent_metric_name[1m]))', 20)).to.deep.equal([]);
    expect(await instant('{__name__=~"nope.*"}', 20)).to.deep.equal([]);
    expect(await range('nonexistent_metric_name', 0, 60, 15)).to.deep.equal([]);
  });

  it('counts rate, increase, irate and delta across a counter reset, extrapolated as Prometheus does', async () => {
    const r = values(await instant('rate(http_requests_total{code="200"}[1m])', 90));
    // Window (30, 90]: samples 30, 40, 5, 15 at 45..90 → increase 15 - 30 + 40 (reset) = 25 over 45 s sampled,
    // 15 s average; 15 s to the start (< 16.5, and the counter's zero point is 54 s away) → 25 × 60 / 45 over 60 s.
    expect(Number(r['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(25 / 45, 1e-12);
    const inc = values(await instant('increase(http_requests_total{code="200"}[1m])', 100));
    // Window [40, 100]: samples at 45..90 (30, 40, 5, 15): raw 15 - 30 + 40 = 25, sampled 45 s, avg 15 s;
    // to start 5 s (< 16.5) and to end 10 s (< 16.5) → 25 × 60 / 45.
    expect(Number(inc['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo((25 * 60) / 45, 1e-9);
    const irate = values(await instant('irate(http_requests_total[1m])', 90));
    // Last two samples 5 → 15 in 15 s; for 500: 175 → 190.
    expect(Number(irate['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(10 / 15, 1e-12);
    expect(Number(irate['{"code":"500","instance":"host:9091","job":"api"}'])).to.be.closeTo(1, 1e-12);
    const irateAtReset = values(await instant('irate(http_requests_total{code="200"}[1m])', 75));
    expect(Number(irateAtReset['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(5 / 15, 1e-12);
    const delta = values(await instant('delta(temp{room="a"}[1m])', 40));
    // Window [-20, 40]: 20, 21, 22 at 0, 15, 30: raw 2 over 30 s, avg 15; start 20 s ≥ 16.5 → +7.5; end 10 s → +10: 2 × 47.5 / 30.
    expect(Number(delta['{"instance":"host:9090","job":"api","room":"a"}'])).to.be.closeTo((2 * 47.5) / 30, 1e-12);
  });

  it('reads a sample written twice once', async () => {
    // Window (0, 60]: the samples at 30 and 60, each stored twice.
    expect((await instant('count_over_time(twice_total[1m])', 60)).map((x) => x.value[1])).to.deep.equal(['2']);
    // Window [10, 70]: samples 30, 60 → 30 over 30 s sampled, 30 s average; start 20 s and end 10 s both under 33: 30 × 60 / 30.
    // Read twice, the average would be 10 s and the start 20 s over 11: 30 × 45 / 30.
    expect((await instant('increase(twice_total[1m])', 70)).map((x) => Number(x.value[1]))).to.deep.equal([60]);
  });

  it('evaluates a range query at start + k × step', async () => {
    const r = await range('http_requests_total{code="500"}', 0, 60, 30);
    expect(r).to.deep.equal([
      {
        metric: { __name__: 'http_requests_total', code: '500', instance: 'host:9091', job: 'api' },
        values: [
          [T0, '100'],
          [T0 + 30, '130'],
          [T0 + 60, '160'],
        ],
      },
    ]);
    // Every window (t - 30 s, t] holds two samples 15 s apart, 15 apart in value; extrapolated 15 s to the start: exactly 1/s.
    const rate = await range('rate(http_requests_total{code="500"}[30s])', 30, 90, 15);
    expect(rate.map((x) => x.values.map((v) => v[1]))).to.deep.equal([['1', '1', '1', '1', '1']]);
    // Left-open windows (t - 20 s, t] over samples at 0, 15, 30 (room a): 1, 1, 1, 2, 1, then none.
    const counts = await range('count_over_time(temp{room="a"}[20s])', 0, 60, 10);
    expect(counts.map((x) => x.values.map((v) => v[1]))).to.deep.equal([['1', '1', '1', '2', '1']]);
  });

  it('sums rates by a label', async () => {
    const r = await instant('sum by (job) (rate(http_requests_total[1m]))', 60);
    // code=500: 60 over 60 s = 1; code=200: 40 - 0 = 40... window [0, 60] samples 0..40 → 40/60.
    expect(r.map((s) => s.metric)).to.deep.equal([{ job: 'api' }]);
    expect(Number(r[0]?.value[1])).to.be.closeTo(1 + 40 / 60, 1e-12);
  });

  it('drops a series 5 minutes after its last sample, and at once after a stale marker', async () => {
    // The lookback window (t - 5m, t] holds the sample at 30 until t = 329.999.
    expect((await instant('temp{room="a"}', 329)).map((x) => x.value[1])).to.deep.equal(['22']);
    expect(await instant('temp{room="a"}', 330)).to.deep.equal([]);
    expect(await instant('temp{room="a"}', 100, { lookback_delta: '1m' })).to.deep.equal([]);
    expect(await instant('temp{room="b"}', 30)).to.deep.equal([]);
    const r = await range('temp', 0, 60, 15);
    expect(r.map((x) => [x.metric['room'], x.values.map((v) => v[1])])).to.deep.equal([
      ['a', ['20', '21', '22', '22', '22']],
      ['b', ['10', '11']],
    ]);
  });

  it('computes the *_over_time functions; only last_over_time keeps the metric name', async () => {
    // Window (0, 30]: 21 and 22.
    const at30 = async (fn: string): Promise<VectorResult> => instant(`${fn}(temp{room="a"}[30s])`, 30);
    expect((await at30('avg_over_time'))[0]?.value[1]).to.equal('21.5');
    expect((await at30('sum_over_time'))[0]?.value[1]).to.equal('43');
    expect((await at30('min_over_time'))[0]?.value[1]).to.equal('21');
    expect((await at30('max_over_time'))[0]?.value[1]).to.equal('22');
    expect((await at30('count_over_time'))[0]?.value[1]).to.equal('2');
    const last = await at30('last_over_time');
    expect(last).to.deep.equal([{ metric: { __name__: 'temp', instance: 'host:9090', job: 'api', room: 'a' }, value: [T0 + 30, '22'] }]);
    expect((await at30('max_over_time'))[0]?.metric).to.not.have.property('__name__');
    // The stale marker is not a sample of the range.
    expect((await instant('count_over_time(temp{room="b"}[1m])', 40))[0]?.value[1]).to.equal('2');
  });

  it('aggregates with by and without, and keeps the k largest or smallest', async () => {
    const one = async (q: string): Promise<[Record<string, string>, string][]> => (await instant(q, 60)).map((x) => [x.metric, x.value[1]]);
    expect(await one('sum(http_requests_total)')).to.deep.equal([[{}, '200']]);
    expect(await one('avg by (job) (http_requests_total)')).to.deep.equal([[{ job: 'api' }, '100']]);
    expect(await one('min without (code, instance) (http_requests_total)')).to.deep.equal([[{ job: 'api' }, '40']]);
    expect(await one('max by (code) (http_requests_total)')).to.deep.equal([
      [{ code: '200' }, '40'],
      [{ code: '500' }, '160'],
    ]);
    // room b ended with its stale marker at 30.
    expect(await one('count(temp)')).to.deep.equal([[{}, '1']]);
    expect((await instant('count(temp)', 20)).map((x) => x.value[1])).to.deep.equal(['2']);
    expect(await one('topk(1, http_requests_total)')).to.deep.equal([
      [{ __name__: 'http_requests_total', code: '500', instance: 'host:9091', job: 'api' }, '160'],
    ]);
    expect(await one('bottomk(1, http_requests_total)')).to.deep.equal([
      [{ __name__: 'http_requests_total', code: '200', instance: 'host:9090', job: 'api' }, '40'],
    ]);
    expect((await one('topk(5, http_requests_total)')).map((x) => x[1])).to.deep.equal(['160', '40']);
  });

  it('interpolates histogram_quantile within classic buckets', async () => {
    const q = async (phi: number): Promise<string | undefined> => (await instant(`histogram_quantile(${phi}, lat_bucket)`, 60))[0]?.value[1];
    // rank 20 of 40 falls in (0.1, 0.5] holding 10..30 → 0.1 + 0.4 × 10/20.
    expect(Number(await q(0.5))).to.be.closeTo(0.3, 1e-12);
    // rank 39.6 in (0.5, 1] holding 30..40 → 0.5 + 0.5 × 9.6/10.
    expect(Number(await q(0.99))).to.be.closeTo(0.98, 1e-12);
    expect(await q(1.5)).to.equal('+Inf');
    expect(await q(-1)).to.equal('-Inf');
    // (-60, 60] holds both samples (0 and 60); (0, 60] would hold one, too few for a rate.
    const r = await instant('histogram_quantile(0.5, sum by (le) (rate(lat_bucket[2m])))', 60);
    expect(r.map((x) => x.metric)).to.deep.equal([{}]);
    expect(Number(r[0]?.value[1])).to.be.closeTo(0.3, 1e-12);
    // No series at t=0 has any observation → NaN.
    expect((await instant('histogram_quantile(0.5, lat_bucket)', 0))[0]?.value[1]).to.equal('NaN');
  });

  it('applies arithmetic and comparisons between vectors (on, ignoring, bool) and with scalars', async () => {
    const one = async (q: string, t = 60): Promise<[Record<string, string>, string][]> => (await instant(q, t)).map((x) => [x.metric, x.value[1]]);
    expect(await one('http_requests_total{code="500"} - ignoring(code, instance) http_requests_total{code="200"}')).to.deep.equal([[{ job: 'api' }, '120']]);
    expect(await one('sum by (job) (http_requests_total) / on(job) sum by (job) (http_requests_total{code="200"})')).to.deep.equal([[{ job: 'api' }, '5']]);
    // Without a matching modifier, all labels but __name__ must match: temp and http_requests_total share none.
    expect(await one('temp + http_requests_total', 20)).to.deep.equal([]);
    expect(await one('http_requests_total > 100')).to.deep.equal([
      [{ __name__: 'http_requests_total', code: '500', instance: 'host:9091', job: 'api' }, '160'],
    ]);
    expect((await one('http_requests_total > bool 100')).map((x) => [x[0]['code'], x[0]['__name__'], x[1]])).to.deep.equal([
      ['200', undefined, '0'],
      ['500', undefined, '1'],
    ]);
    expect((await one('temp * 2 + 1', 20)).map((x) => x[1])).to.deep.equal(['43', '23']);
    expect((await one('100 - temp', 20)).map((x) => x[1])).to.deep.equal(['79', '89']);
    expect((await one('-temp', 20)).map((x) => [x[0]['__name__'], x[1]])).to.deep.equal([
      [undefined, '-21'],
      [undefined, '-11'],
    ]);
    expect((await one('temp / 0', 20)).map((x) => x[1])).to.deep.equal(['+Inf', '+Inf']);
    // (temp % 4) == 1: the comparison keeps the left side's value, 21 % 4.
    expect(await one('temp % 4 == 1', 20)).to.deep.equal([[{ instance: 'host:9090', job: 'api', room: 'a' }, '1']]);
    expect((await one('temp ^ 2 >= bool 400', 20)).map((x) => x[1])).to.deep.equal(['1', '0']);
    expect((await one('-temp % 4', 20)).map((x) => x[1])).to.deep.equal(['-1', '-3']);
    expect((await one('temp % Inf', 20)).map((x) => x[1])).to.deep.equal(['21', '11']);
    expect((await one('temp % 0', 20)).map((x) => x[1])).to.deep.equal(['NaN', 'NaN']);
    // Both requests series match the one of temp on no labels: refused, never summed into a wrong answer.
    const ambiguous = await get('/api/v1/query', { query: 'sum(http_requests_total + on() temp{room="a"})', time: T0 + 20 });
    expect(ambiguous.status).to.be.oneOf([422, 500]);
    expect(ambiguous.body).to.include({ status: 'error' });
    const scalar = await get('/api/v1/query', { query: '1 + 2 * 3', time: T0 });
    expect(field(scalar.body, 'data')).to.deep.equal({ resultType: 'scalar', result: [T0, '7'] });
    const rangeScalar = await range('2 > bool 1', 0, 30, 15);
    expect(rangeScalar).to.deep.equal([
      {
        metric: {},
        values: [
          [T0, '1'],
          [T0 + 15, '1'],
          [T0 + 30, '1'],
        ],
      },
    ]);
  });

  it("computes % exactly as Go's math.Mod and -1 ^ 2 as -(1 ^ 2)", async () => {
    const scalar = async (q: string): Promise<string> => {
      const reply = await get('/api/v1/query', { query: q, time: T0 });
      expect(reply.status, `${q}: ${reply.text}`).to.equal(200);
      return String(field(reply.body, 'data', 'result', 1));
    };
    expect(await scalar('-1 ^ 2')).to.equal('-1');
    expect(await scalar('2 * -2 ^ 2')).to.equal('-8');
    expect(await scalar('(-1) ^ 2')).to.equal('1');
    // Constant scalars are folded in JavaScript, whose % is fmod like Go's math.Mod: nested constants stay small
    // (the compliance tester's case, a negative constant modulo a vector, once made a statement too big to run).
    expect(Number(await scalar('262144000 % (1 * 2 + 4 / 6 - 10)'))).to.equal(262144000 % (1 * 2 + 4 / 6 - 10));
    expect((await instant('(1 * 2 + 4 / 6 - (10 % 7) ^ 2) % temp', 20)).map((x) => Number(x.value[1]))).to.deep.equal([21, 11].map((t) => (2 + 4 / 6 - 9) % t));
    // Between a vector and a scalar the remainder is computed in ClickHouse (exactly, Dekker's product): `temp * 0 + a` is
    // a vector of value a. Exact while the quotient stays under 2^53 (here at most 1e15).
    const divisor = fc.tuple(fc.double({ min: 1e-3, max: 1e6, noNaN: true }), fc.boolean()).map(([d, negative]) => (negative ? -d : d));
    await fc.assert(
      fc.asyncProperty(fc.double({ min: -1e12, max: 1e12, noNaN: true }), divisor, async (a, b) => {
        const got = (await instant(`(temp{room="a"} * 0 + ${a}) % ${b}`, 20)).map((x) => x.value[1]);
        const want = (21 * 0 + a) % b; // the vector's value is temp * 0 + a, with temp{room="a"} 21 (+0 even when a is -0)
        expect(got, `${a} % ${b}`).to.deep.equal([formatSampleValue(want)]);
      }),
      { numRuns: 50 },
    );
  }).timeout(60_000);

  it('applies abs, clamp_min, clamp_max, round and offset', async () => {
    const vals = async (q: string, t = 20): Promise<string[]> => (await instant(q, t)).map((x) => x.value[1]);
    expect(await vals('abs(-temp)')).to.deep.equal(['21', '11']);
    expect(await vals('clamp_min(temp, 15)')).to.deep.equal(['21', '15']);
    expect(await vals('clamp_max(temp, 15)')).to.deep.equal(['15', '11']);
    expect(await vals('round(temp / 4)')).to.deep.equal(['5', '3']);
    expect(await vals('round(temp / 3, 0.5)')).to.deep.equal(['7', '3.5']);
    expect(await vals('temp{room="a"} offset 15s', 30)).to.deep.equal(['21']);
    expect(await vals('rate(http_requests_total{code="500"}[30s] offset 30s)', 90)).to.deep.equal(['1']);
  });

  it('answers an instant query of a range selector with the raw samples', async () => {
    const reply = await get('/api/v1/query', { query: 'temp{room="a"}[20s]', time: T0 + 30 });
    expect(field(reply.body, 'data')).to.deep.equal({
      resultType: 'matrix',
      result: [
        {
          metric: { __name__: 'temp', instance: 'host:9090', job: 'api', room: 'a' },
          values: [
            [T0 + 15, '21'],
            [T0 + 30, '22'],
          ],
        },
      ],
    });
  });

  it('refuses what Prometheus 3.16 refuses without feature flags with 400 bad_data naming it', async () => {
    const refused = async (query: string, fragment: string): Promise<void> => {
      const reply = await get('/api/v1/query', { query, time: T0 });
      expect(reply.status, reply.text).to.equal(400);
      expect(reply.body).to.include({ status: 'error', errorType: 'bad_data' });
      expect(String(field(reply.body, 'error'))).to.include(fragment);
    };
    await refused('sort_by_label(temp, "room")', 'function "sort_by_label" is not enabled');
    await refused('mad_over_time(temp[5m])', 'function "mad_over_time" is not enabled');
    await refused('limitk(1, temp)', 'limitk() is experimental');
    await refused('holt_winters(temp[5m], 0.5, 0.5)', 'unknown function with name "holt_winters"');
    await refused('sum(temp', 'parse error');
    await refused('rate(temp)', 'expected type range vector');
    await refused('', 'no expression found');
  });

  it('binds every matcher value: quotes select nothing, a bad regex is 400 bad_data', async () => {
    expect(await instant('temp{room="a\' OR 1=1 --"}', 20)).to.deep.equal([]);
    expect(await instant('temp{room=~".*\') OR (1=1"}', 20)).to.deep.equal([]);
    const bad = await get('/api/v1/query', { query: 'temp{room=~"("}', time: T0 + 20 });
    expect(bad.status, bad.text).to.equal(400);
    expect(bad.body).to.include({ status: 'error', errorType: 'bad_data' });
    // Anchored: "a" does not match "ab", "a|b" matches both rooms.
    expect(await instant('temp{room=~"a|b"}', 20)).to.have.length(2);
    expect(await instant('temp{job=~"ap"}', 20)).to.deep.equal([]);
  });

  it('checks the time parameters and the 11,000 points limit as Prometheus does', async () => {
    const q = (params: Record<string, string | number>): Promise<Reply> => get('/api/v1/query_range', { query: 'temp', ...params });
    const over = await q({ start: T0, end: T0 + 11_001, step: 1 });
    expect(over.status).to.equal(400);
    expect(field(over.body, 'error')).to.equal('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)');
    expect((await q({ start: T0, end: T0 + 11_000, step: 1 })).status).to.equal(200);
    expect((await q({ start: T0, end: T0 + 60 })).status).to.equal(400);
    expect(field((await q({ start: T0, end: T0 + 60, step: '0' })).body, 'error')).to.include('zero or negative query resolution step');
    expect(field((await q({ start: T0 + 60, end: T0, step: 15 })).body, 'error')).to.include('end timestamp must not be before start time');
    expect((await q({ start: 'yesterday', end: T0, step: 15 })).status).to.equal(400);
    const rfc = await q({ start: new Date(T0 * 1000).toISOString(), end: new Date((T0 + 30) * 1000).toISOString(), step: '15s' });
    expect((field(rfc.body, 'data', 'result') as MatrixResult).find((x) => x.metric['room'] === 'a')?.values).to.deep.equal([
      [T0, '20'],
      [T0 + 15, '21'],
      [T0 + 30, '22'],
    ]);
    const matrix = await q({ query: 'temp[1m]', start: T0, end: T0 + 60, step: 15 });
    expect(field(matrix.body, 'error')).to.include('invalid expression type "range vector" for range query');
  });

  it('stops a query at its timeout parameter (503, errorType timeout), and answers it within one long enough', async () => {
    // A 1 s subquery over 5 min at each of 11,000 steps: seconds of evaluation, and the evaluator lets the timer fire between steps.
    const query = 'max_over_time(temp[5m:1s])';
    const stopped = await get('/api/v1/query_range', { query, start: T0, end: T0 + 10_999, step: 1, timeout: '1ms' });
    expect(stopped.status, stopped.text.slice(0, 300)).to.equal(503);
    expect(stopped.body).to.deep.include({ status: 'error', errorType: 'timeout' });
    const answered = await get('/api/v1/query_range', { query, start: T0, end: T0 + 60, step: 15, timeout: '30s' });
    expect(answered.status, answered.text.slice(0, 300)).to.equal(200);
    expect(field(answered.body, 'data', 'result')).to.have.length(2);
  });

  it('takes POST form bodies as Grafana sends them', async () => {
    const reply = await h.call('POST', '/prometheus/api/v1/query', {
      key: keys.readAcme,
      raw: new URLSearchParams({ query: '1+1', time: String(T0) }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body).to.deep.equal({ status: 'success', data: { resultType: 'scalar', result: [T0, '2'] } });
  });

  it('reads a form body as the shared reader does: UTF-8, a BOM dropped, a repeated parameter refused', async () => {
    const query = 'label_replace(vector(1), "where", "café ✓", "", "")';
    const post = (raw: string, headers: Record<string, string> = {}): Promise<Reply> =>
      h.call('POST', '/prometheus/api/v1/query', { key: keys.readAcme, raw, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
    const want = { status: 'success', data: { resultType: 'vector', result: [{ metric: { where: 'café ✓' }, value: [T0, '1'] }] } };
    const form = new URLSearchParams({ query, time: String(T0) }).toString();
    for (const reply of [await post(form), await post(`\uFEFF${form}`), await post(form, { 'content-encoding': 'identity' })]) {
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body).to.deep.equal(want);
    }
    // The body's parameters count with the query string's: given in both, a 400 as on /v1.
    const twice = await h.call('POST', `/prometheus/api/v1/query?time=${T0}`, {
      key: keys.readAcme,
      raw: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(twice.status, twice.text).to.equal(400);
    expect(field(twice.body, 'error')).to.equal('query parameter "time" is given more than once');
  });
});
