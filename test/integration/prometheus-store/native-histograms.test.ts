// Native histograms end to end, as Prometheus 3 holds them: remote-written
// through the real gateway and read back through the SampleSource and
// /prometheus/api/v1/query (one series under its own name, histogram
// samples, a stale sum ending it); OTLP exponential histograms as native
// histograms under their translated name (scale above 8 merged down, zero
// threshold 1e-128, delta not exposed); the conversion's bucket layout.
import { scanOf } from '../../support/tenant-scans.ts';
import { expect } from 'chai';
import { createPromSampleSource } from '../../../api/compat/prometheus/prom-sample-store.ts';
import type { LabelMatcher, StoredSeries } from '../../../api/compat/prometheus/engine/sample-source.ts';
import { SeriesIndexCache } from '../../../api/compat/prometheus/series-index.ts';
import { nativeHistogram } from '../../../api/compat/prometheus/stored-histogram.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { staleMarkerBits } from '../../../src/prometheus/remote-write-scope.ts';
import { field, keys, startHarness } from '../api/support/api-harness.ts';
import type { Harness } from '../api/support/api-harness.ts';
import { insertRows, metricRow } from '../api/support/telemetry-rows.ts';
import { keys as gatewayKeys, startTestGateway } from '../gateway/support/gateway-harness.ts';
import type { TestGateway } from '../gateway/support/gateway-harness.ts';
import { encodeWriteRequest, pushRemoteWrite, remoteWriteHeaders, snappyBlock, withStaleMarkers } from '../../../support/remote-write-request.ts';

const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3600;
const ms = (s: number): number => (T0 + s) * 1000;
/** Replaced by the stale marker's bits in the encoded request. */
const staleSentinel = 123456.789;
const m = (name: string, op: LabelMatcher['op'], value: string): LabelMatcher => ({ name, op, value });
const never = new AbortController().signal;

/** Whether sample i of a series is Prometheus' stale marker, by its bits. */
const isStale = (s: StoredSeries, i: number): boolean => new BigUint64Array(s.values.buffer, s.values.byteOffset, s.values.length)[i] === staleMarkerBits;

describe('prometheus-store: native histograms', function () {
  this.timeout(60_000);
  let h: Harness;
  let gateway: TestGateway;
  const select = async (matchers: LabelMatcher[]): Promise<StoredSeries[]> => {
    const source = createPromSampleSource({
      runner: createQueryRunner(h.store, 10_000, silentLogger),
      schema: h.store,
      scan: scanOf('acme', 'metrics', BigInt(Date.now()) * 1_000_000n),
      visibleFromMs: 0,
      maxSamples: 1_000_000,
      index: new SeriesIndexCache({ refreshMs: 0 }),
    });
    const r = await source.select({ matchers, minT: ms(-1), maxT: ms(600) }, never);
    if (!r.ok) throw new Error(`${r.error.type}: ${r.error.message}`);
    return [...r.value];
  };
  const query = async (q: string, t: number): Promise<unknown> => {
    const reply = await h.call('GET', `/prometheus/api/v1/query?${new URLSearchParams({ query: q, time: String(T0 + t) }).toString()}`, { key: keys.readAcme });
    expect(reply.status, reply.text).to.equal(200);
    return field(reply.body, 'data', 'result');
  };

  before(async () => {
    h = await startHarness('prom_native');
    gateway = await startTestGateway('prom_native_gw', { store: h.store });
    // Sample k (at 15k s): 2k observations in (0.5, 1] and 2k in (1, 2] (schema 0), sum 6k; at 75 s a stale histogram.
    const histograms = [0, 1, 2, 3, 4].map((k) => ({
      countInt: 4 * k,
      sum: 6 * k,
      schema: 0,
      zeroThreshold: 0.001,
      zeroCountInt: 0,
      timestampMs: ms(15 * k),
      positiveSpans: [{ offset: 0, length: 2 }],
      positiveDeltas: [2 * k, 0],
    }));
    const body = encodeWriteRequest([
      {
        labels: { __name__: 'rw_latency_seconds', job: 'api', instance: 'h1:8080' },
        histograms: [...histograms, { countInt: 0, sum: staleSentinel, schema: 0, timestampMs: ms(75) }],
      },
    ]);
    const pushed = await pushRemoteWrite(
      gateway.httpUrl,
      snappyBlock(withStaleMarkers(body, staleSentinel)),
      remoteWriteHeaders({ authorization: `Bearer ${gatewayKeys.admin}`, 'x-scope-orgid': 'acme' }),
    );
    expect(pushed.status, pushed.text).to.be.oneOf([200, 204]);
    await gateway.flush();
    const resource = { 'service.name': 'api', 'service.instance.id': 'pod-1' };
    const ns = (s: number): bigint => BigInt(ms(s)) * 1_000_000n;
    await insertRows(h.store, 'metrics', [
      // OpenTelemetry scale 10: buckets (2^(k/1024), 2^((k+1)/1024)] for k = 4..7 are one bucket at schema 8, Prometheus index 2.
      metricRow({
        tenant: 'acme',
        name: 'otel.latency',
        type: 'exponential_histogram',
        temporality: 'cumulative',
        unit: 's',
        ns: ns(0),
        resource,
        count: 12,
        sum: 1.5,
        expScale: 10,
        expZero: 2,
        expPosOffset: 4,
        expPos: [1, 2, 3, 4],
        expNegOffset: -1,
        expNeg: [0, 0],
      }),
      // A scale Prometheus cannot hold: no sample.
      metricRow({
        tenant: 'acme',
        name: 'otel.latency',
        type: 'exponential_histogram',
        temporality: 'cumulative',
        unit: 's',
        ns: ns(15),
        resource,
        count: 1,
        sum: 1,
        expScale: -5,
        expPos: [1],
      }),
      metricRow({
        tenant: 'acme',
        name: 'otel.delta',
        type: 'exponential_histogram',
        temporality: 'delta',
        unit: 's',
        ns: ns(0),
        resource,
        count: 1,
        sum: 1,
        expPos: [1],
      }),
    ]);
  });
  after(async () => {
    await gateway.stop();
    await h.close();
  });

  it('selects a remote-written native histogram as one series of histogram samples, its stale sum a staleness marker', async () => {
    const [s, ...rest] = await select([m('__name__', '=', 'rw_latency_seconds')]);
    expect(rest).to.deep.equal([]);
    expect(s?.labels).to.deep.equal([
      ['__name__', 'rw_latency_seconds'],
      ['instance', 'h1:8080'],
      ['job', 'api'],
    ]);
    expect([...(s?.times ?? [])]).to.deep.equal([0, 15, 30, 45, 60, 75].map(ms));
    expect(s?.histograms?.[4]).to.deep.equal({
      counterResetHint: 'unknown',
      schema: 0,
      zeroThreshold: 0.001,
      zeroCount: 0,
      count: 16,
      sum: 24,
      positiveSpans: [{ offset: 0, length: 2 }],
      positiveBuckets: [8, 8],
      negativeSpans: [],
      negativeBuckets: [],
    });
    expect(s?.histograms?.[5]).to.equal(undefined);
    expect(s !== undefined && isStale(s, 5)).to.equal(true);
    expect(s !== undefined && isStale(s, 4)).to.equal(false);
    // No _sum, _count or _bucket series: Prometheus 3 stores one series.
    expect(await select([m('__name__', '=~', 'rw_latency_seconds_.*')])).to.deep.equal([]);
  });

  it('answers histogram_count, histogram_sum and histogram_quantile over rate through /prometheus', async () => {
    const labels = { instance: 'h1:8080', job: 'api' };
    expect(await query('histogram_count(rw_latency_seconds)', 60)).to.deep.equal([{ metric: labels, value: [T0 + 60, '16'] }]);
    expect(await query('histogram_sum(rw_latency_seconds)', 60)).to.deep.equal([{ metric: labels, value: [T0 + 60, '24'] }]);
    // Half the observations at or below 1: the median is the first bucket's upper bound whatever the interpolation.
    expect(await query('histogram_quantile(0.5, rate(rw_latency_seconds[1m]))', 60)).to.deep.equal([{ metric: labels, value: [T0 + 60, '1'] }]);
    // The raw histogram sample, and none once the stale marker is the newest sample.
    const raw = await query('rw_latency_seconds', 60);
    expect(raw).to.deep.equal([
      {
        metric: { __name__: 'rw_latency_seconds', ...labels },
        histogram: [
          T0 + 60,
          {
            count: '16',
            sum: '24',
            buckets: [
              [0, '0.5', '1', '8'],
              [0, '1', '2', '8'],
            ],
          },
        ],
      },
    ]);
    expect(await query('rw_latency_seconds', 80)).to.deep.equal([]);
  });

  it('selects an OTLP exponential histogram as a native histogram under its Prometheus name, as the OTLP receiver converts it', async () => {
    const [s, ...rest] = await select([m('__name__', '=', 'otel_latency_seconds')]);
    expect(rest).to.deep.equal([]);
    expect(s?.labels).to.deep.equal([
      ['__name__', 'otel_latency_seconds'],
      ['instance', 'pod-1'],
      ['job', 'api'],
    ]);
    expect([...(s?.times ?? [])]).to.deep.equal([ms(0)]);
    expect(s?.histograms?.[0]).to.deep.equal({
      counterResetHint: 'unknown',
      schema: 8,
      zeroThreshold: 1e-128,
      zeroCount: 2,
      count: 12,
      sum: 1.5,
      // The empty negative side keeps its layout, as the OTLP receiver writes it: a span from the side's offset
      // through its last bucket (always written), so histogram_quantile's zero bucket spans [-threshold, threshold].
      positiveSpans: [{ offset: 2, length: 1 }],
      positiveBuckets: [10],
      negativeSpans: [{ offset: 0, length: 2 }],
      negativeBuckets: [0, 0],
    });
    expect(await select([m('__name__', '=~', 'otel_latency_seconds_(sum|count)')])).to.deep.equal([]);
    // Delta temporality has no Prometheus form.
    expect(await select([m('__name__', '=~', 'otel_delta.*')])).to.deep.equal([]);
  });

  it('keeps a remote-written layout as stored; lays OTLP buckets out as the OTLP receiver does', () => {
    const row = {
      scale: 0,
      zeroCount: 0,
      zeroThreshold: 0.5,
      count: 7,
      sum: 3,
      positiveOffset: -2,
      positiveCounts: [0, 1, 0, 2, 0, 0, 0, 4, 0],
      negativeOffset: 3,
      negativeCounts: [5],
    };
    // Remote-written: one dense span from the first stored bucket (OpenTelemetry index -2 is Prometheus index -1), empty ones kept.
    expect(nativeHistogram(row, false)).to.deep.equal({
      counterResetHint: 'unknown',
      schema: 0,
      zeroThreshold: 0.5,
      zeroCount: 0,
      count: 7,
      sum: 3,
      positiveSpans: [{ offset: -1, length: 9 }],
      positiveBuckets: [0, 1, 0, 2, 0, 0, 0, 4, 0],
      negativeSpans: [{ offset: 4, length: 1 }],
      negativeBuckets: [5],
    });
    expect(nativeHistogram({ ...row, scale: -5 }, true)).to.equal(undefined);
    expect(nativeHistogram({ ...row, scale: 9 }, false)).to.equal(undefined);
    // OTLP scale 9 merges pairs: OpenTelemetry indexes -2..-1 are Prometheus index 0 at schema 8, 0..1 index 1, 4..5 index 3
    // (a zero bucket between), and the last (6, index 4) is written though empty.
    expect(nativeHistogram({ ...row, scale: 9 }, true))
      .to.include({ schema: 8, zeroThreshold: 1e-128 })
      .and.to.deep.include({
        positiveSpans: [{ offset: 0, length: 5 }],
        positiveBuckets: [1, 2, 0, 4, 0],
        negativeSpans: [{ offset: 2, length: 1 }],
        negativeBuckets: [5],
      });
  });
});
