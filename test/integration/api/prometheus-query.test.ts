// The Prometheus query API under /prometheus: instant and range queries of
// every supported construct over remote-write-shaped rows, against values
// worked out by hand in the comments (Prometheus 2 semantics).
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { insertRows, metricRow, secondsNs } from './support/telemetry-rows.ts';
import type { MetricSpec } from './support/telemetry-rows.ts';

const rw = 'tenantry.prometheus.remote_write';
/** A whole hour an hour ago: inside the default retention, aligned for readable steps. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3600;
const staleNaN = (): number => new Float64Array(new BigUint64Array([0x7ff0000000000002n]).buffer)[0] ?? NaN;

interface Series { name: string; labels: Record<string, string>; type?: string; job?: string; instance?: string; tenant?: string }

/** Rows as remote write stores them: labels in attributes, job and instance as resource attributes. */
function samples(s: Series, points: readonly (readonly [number, number])[]): Record<string, unknown>[] {
  return points.map(([t, v]) => metricRow({
    tenant: s.tenant ?? 'acme', name: s.name, type: s.type ?? 'gauge', ns: secondsNs(T0) + BigInt(Math.round(t * 1000)) * 1_000_000n, value: v,
    resource: { 'service.name': s.job ?? 'api', 'service.instance.id': s.instance ?? 'host:9090' }, attrs: s.labels,
  } satisfies MetricSpec)).map((row) => ({ ...row, scope_name: rw }));
}

type VectorResult = { metric: Record<string, string>; value: [number, string] }[];
type MatrixResult = { metric: Record<string, string>; values: [number, string][] }[];

describe('api/prometheus query', () => {
  let h: Harness;
  const get = (path: string, params: Record<string, string | number>, key: string = keys.readAcme): Promise<Reply> =>
    h.call('GET', `/prometheus${path}?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()}`, { key });
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
      ...samples({ name: 'http_requests_total', type: 'sum', labels: { code: '200' } }, [[0, 0], [15, 10], [30, 20], [45, 30], [60, 40], [75, 5], [90, 15]]),
      // A second counter, steady 1/s.
      ...samples({ name: 'http_requests_total', type: 'sum', labels: { code: '500' }, instance: 'host:9091' }, [[0, 100], [15, 115], [30, 130], [45, 145], [60, 160], [75, 175], [90, 190]]),
      // A gauge that stops at t=30 (no marker), and one ended by a stale marker at t=30.
      ...samples({ name: 'temp', labels: { room: 'a' } }, [[0, 20], [15, 21], [30, 22]]),
      ...samples({ name: 'temp', labels: { room: 'b' } }, [[0, 10], [15, 11], [30, staleNaN()]]),
      // Another tenant's series of the same name.
      ...samples({ name: 'temp', labels: { room: 'secret' }, tenant: 'globex' }, [[0, 99], [15, 99]]),
    ]);
  });
  after(async () => { await h.close(); });

  it('answers an instant vector selector with its labels, __name__, job and instance', async () => {
    const r = await instant('temp', 20);
    expect(r).to.deep.equal([
      { metric: { __name__: 'temp', instance: 'host:9090', job: 'api', room: 'a' }, value: [T0 + 20, '21'] },
      { metric: { __name__: 'temp', instance: 'host:9090', job: 'api', room: 'b' }, value: [T0 + 20, '11'] },
    ]);
  });

  it('counts rate, increase, irate and delta across a counter reset, extrapolated as Prometheus does', async () => {
    const r = values(await instant('rate(http_requests_total{code="200"}[1m])', 90));
    // Window [30, 90]: samples 20, 30, 40, 5, 15 at 30..90 → increase 15 - 20 + 40 (reset) = 35 over 60 s sampled;
    // both ends on the window's edges → no extrapolation: 35 / 60.
    expect(Number(r['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(35 / 60, 1e-12);
    const inc = values(await instant('increase(http_requests_total{code="200"}[1m])', 100));
    // Window [40, 100]: samples at 45..90 (30, 40, 5, 15): raw 15 - 30 + 40 = 25, sampled 45 s, avg 15 s;
    // to start 5 s (< 16.5) and to end 10 s (< 16.5) → 25 × 60 / 45.
    expect(Number(inc['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(25 * 60 / 45, 1e-9);
    const irate = values(await instant('irate(http_requests_total[1m])', 90));
    // Last two samples 5 → 15 in 15 s; for 500: 175 → 190.
    expect(Number(irate['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(10 / 15, 1e-12);
    expect(Number(irate['{"code":"500","instance":"host:9091","job":"api"}'])).to.be.closeTo(1, 1e-12);
    const irateAtReset = values(await instant('irate(http_requests_total{code="200"}[1m])', 75));
    expect(Number(irateAtReset['{"code":"200","instance":"host:9090","job":"api"}'])).to.be.closeTo(5 / 15, 1e-12);
    const delta = values(await instant('delta(temp{room="a"}[1m])', 40));
    // Window [-20, 40]: 20, 21, 22 at 0, 15, 30: raw 2 over 30 s, avg 15; start 20 s ≥ 16.5 → +7.5; end 10 s → +10: 2 × 47.5 / 30.
    expect(Number(delta['{"instance":"host:9090","job":"api","room":"a"}'])).to.be.closeTo(2 * 47.5 / 30, 1e-12);
  });

  it('evaluates a range query at start + k × step', async () => {
    const r = await range('http_requests_total{code="500"}', 0, 60, 30);
    expect(r).to.deep.equal([{ metric: { __name__: 'http_requests_total', code: '500', instance: 'host:9091', job: 'api' }, values: [[T0, '100'], [T0 + 30, '130'], [T0 + 60, '160']] }]);
  });

  it('sums rates by a label', async () => {
    const r = await instant('sum by (job) (rate(http_requests_total[1m]))', 60);
    // code=500: 60 over 60 s = 1; code=200: 40 - 0 = 40... window [0, 60] samples 0..40 → 40/60.
    expect(r.map((s) => s.metric)).to.deep.equal([{ job: 'api' }]);
    expect(Number(r[0]?.value[1])).to.be.closeTo(1 + 40 / 60, 1e-12);
  });
});
