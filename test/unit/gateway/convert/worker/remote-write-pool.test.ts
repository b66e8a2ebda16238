// Prometheus remote write in the conversion pool (issue 35) against inline
// conversion: for random decompressed WriteRequests (samples inside and
// outside the retention window, exponential and custom-bucket native
// histograms, metadata, labels past the attribute limits, series the
// request is refused for), a worker writes the same rows, row count,
// rejections, metadata, skipped-histogram count and tenants as
// remoteWriteConverter on the main thread, and asks the main thread the same
// admission and settings questions; invalid bodies fail with the same
// message. The ingest pipeline converts below its offload threshold inline
// and at it in the pool, with the same result.
import { expect } from 'chai';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import type { ItemLimits } from '../../../../../gateway/convert/common/item-limits.ts';
import { defaultItemLimits } from '../../../../../gateway/convert/common/item-limits.ts';
import { hasTruncations } from '../../../../../gateway/convert/common/item-tally.ts';
import { TenantResolver } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import { ConvertPool } from '../../../../../gateway/convert/worker/convert-pool.ts';
import { gatewayMetrics } from '../../../../../gateway/gateway-metrics.ts';
import { defaultDecodeGate, IngestPipeline } from '../../../../../gateway/ingest/ingest-pipeline.ts';
import { IngestLimiter } from '../../../../../gateway/limits/ingest-limiter.ts';
import { RejectedUsage } from '../../../../../gateway/limits/rejected-usage.ts';
import { ManualClock } from '../../../../support/manual-clock.ts';
import { remoteWriteConverter } from '../../../../../gateway/prometheus/write-request.ts';
import type { RemoteWriteBatch } from '../../../../../gateway/prometheus/write-request.ts';
import type { DurableWriter } from '../../../../../gateway/writer/logged-writer.ts';
import { ok } from '../../../../../src/result.ts';
import type { Result } from '../../../../../src/result.ts';
import { builtInDefaults, resolveEffective } from '../../../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../../../src/tenant/settings/tenant-settings.ts';
import { encodeWriteRequest } from '../../../../../support/remote-write-request.ts';
import type { HistogramSpec, MetadataSpec, SeriesSpec } from '../../../../../support/remote-write-request.ts';
import { principal } from '../../support/otlp-arbitraries.ts';
import { rowDifference } from '../../support/row-binary-reader.ts';

const nowMs = 1_700_000_000_000;
const day = 86_400_000;
/** Small attribute limits, so that random labels are dropped and truncated. */
const limits: ItemLimits = { ...defaultItemLimits, maxAttributes: 3, maxAttributeValueBytes: 8 };

/** t1 keeps metrics 2 days, everyone else the defaults: the retention a worker must ask the main thread for. */
function settingsView(asked: string[]): TenantSettingsView {
  return {
    effective: (tenant) => {
      asked.push(tenant);
      return resolveEffective(tenant === 't1' ? { api: { retention: { logsDays: 2, tracesDays: 2, metricsDays: 2 } } } : {}, builtInDefaults);
    },
    generation: 1,
  };
}

/** A resolver whose limiter refuses t2 and records each question. */
function resolver(asked: string[]): TenantResolver {
  return new TenantResolver(principal, {
    admits: (tenant) => {
      asked.push(tenant);
      return tenant !== 't2';
    },
  });
}

/** Times inside every retention, inside only the default one, too old for any, and too far ahead. */
const timestamp = fc.constantFrom(nowMs - 60_000, nowMs - 5 * day, nowMs - 200 * day, nowMs + day, nowMs);
/** Label names: job and instance (read specially), a few others, and rarely an empty one (which makes the request invalid). */
const labelName = fc.oneof(
  { arbitrary: fc.constantFrom('job', 'instance', 'code', 'method', 'path', 'le', 'x'), weight: 30 },
  { arbitrary: fc.constant(''), weight: 1 },
);
/** __name__ nearly always (a series with points and without it makes the request invalid), first or last. */
const labels = fc
  .tuple(fc.option(fc.string({ maxLength: 12 }), { freq: 30 }), fc.dictionary(labelName, fc.string({ maxLength: 12 }), { maxKeys: 6 }), fc.boolean())
  .map(([name, others, last]) => (name === null ? others : last ? { ...others, __name__: name } : { __name__: name, ...others }));
/** Valid spans (only the first may go back) and one delta per bucket they describe. */
const buckets = fc
  .tuple(fc.integer({ min: -3, max: 3 }), fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 1, max: 3 })), { maxLength: 2 }))
  .chain(([first, spans]) => {
    const positiveSpans = spans.map(([offset, length], i) => ({ offset: i === 0 ? first : offset, length }));
    const count = positiveSpans.reduce((n, span) => n + span.length, 0);
    return fc.array(fc.integer({ min: 0, max: 5 }), { minLength: count, maxLength: count }).map((positiveDeltas) => ({ positiveSpans, positiveDeltas }));
  });
const histogram: fc.Arbitrary<HistogramSpec> = fc
  .record({
    countInt: fc.nat(100),
    sum: fc.double({ noNaN: true }),
    // -53: custom buckets (skipped); the others exponential.
    schema: fc.constantFrom(-53, -2, 0, 3),
    buckets,
    timestampMs: timestamp,
  })
  .map(({ buckets: b, ...h }) => ({ ...h, ...b }));
const series: fc.Arbitrary<SeriesSpec> = fc.record({
  labels,
  samples: fc.array(fc.record({ value: fc.double(), timestampMs: timestamp }), { maxLength: 4 }),
  histograms: fc.array(histogram, { maxLength: 2 }),
});
const metadata: fc.Arbitrary<MetadataSpec> = fc.record({
  type: fc.nat(8),
  family: fc.string({ maxLength: 10 }),
  help: fc.string({ maxLength: 20 }),
  unit: fc.string({ maxLength: 4 }),
});
const request = fc.record({
  series: fc.array(series, { maxLength: 6 }),
  metadata: fc.array(metadata, { maxLength: 3 }),
  tenant: fc.constantFrom('t1', 't2', 't3'),
});

/** Holds a pooled result to the inline one: rows, counts, rejections, metadata, skipped histograms. */
function expectSame(got: Result<RemoteWriteBatch, { kind: string; message: string }>, expected: Result<RemoteWriteBatch, string>): void {
  if (!expected.ok) {
    expect(got).to.deep.equal({ ok: false, error: { kind: 'invalid', message: expected.error } });
    return;
  }
  if (!got.ok) return expect.fail(got.error.message);
  const [e, g] = [expected.value, got.value];
  expect(g.batch.table).to.equal(e.batch.table);
  expect(g.batch.rowCount).to.equal(e.batch.rowCount);
  expect(g.batch.rows.equals(e.batch.rows), rowDifference(e.batch.table, e.batch.rows, g.batch.rows)).to.equal(true);
  expect(g.batch.rejected.count).to.equal(e.batch.rejected.count);
  expect([...g.batch.rejected.byReason]).to.deep.equal([...e.batch.rejected.byReason]);
  expect(g.batch.rejected.message('samples')).to.equal(e.batch.rejected.message('samples'));
  expect(hasTruncations(g.batch.rejected) && hasTruncations(e.batch.rejected)).to.equal(true);
  if (hasTruncations(g.batch.rejected) && hasTruncations(e.batch.rejected))
    expect([...g.batch.rejected.truncated]).to.deep.equal([...e.batch.rejected.truncated]);
  expect(g.metadata).to.deep.equal(e.metadata);
  expect(g.skippedHistograms).to.equal(e.skippedHistograms);
}

describe('conversion pool: remote write', function () {
  this.timeout(120_000);
  const askedSettings: string[] = [];
  const settings = settingsView(askedSettings);
  const pool = new ConvertPool({ limits, settings, size: 1, now: () => nowMs });
  const inline = remoteWriteConverter(limits, () => nowMs, settings);
  after(() => pool.stop());

  it('converts a WriteRequest exactly as inline conversion does: rows, rejections, metadata, skipped histograms, questions asked', async () => {
    const seen = { rows: 0, rejected: 0, truncated: 0, metadata: 0, skipped: 0, invalid: 0 };
    await fc.assert(
      fc.asyncProperty(request, async ({ series: s, metadata: m, tenant }) => {
        const body = encodeWriteRequest(s, m);
        const inlineAsked: string[] = [];
        const inlineTenants = resolver(inlineAsked);
        const settingsFrom = askedSettings.length;
        const expected = inline(body, tenant, inlineTenants);
        const inlineSettings = askedSettings.splice(settingsFrom);
        const pooledAsked: string[] = [];
        const pooledTenants = resolver(pooledAsked);
        const got = await pool.convertRemoteWrite(body, tenant, pooledTenants, tenant);
        expect(askedSettings.splice(settingsFrom), 'settings asked').to.deep.equal(inlineSettings);
        expect(pooledAsked, 'admission asked').to.deep.equal(inlineAsked);
        expect([...pooledTenants.tenants]).to.deep.equal([...inlineTenants.tenants]);
        expectSame(got, expected);
        if (!expected.ok) seen.invalid++;
        else {
          const { batch } = expected.value;
          seen.rows += batch.rowCount;
          seen.rejected += batch.rejected.count;
          seen.truncated += hasTruncations(batch.rejected) ? batch.rejected.truncated.size : 0;
          seen.metadata += expected.value.metadata.length;
          seen.skipped += expected.value.skippedHistograms;
        }
      }),
      { numRuns: 300 },
    );
    // The random requests reached every part of the comparison.
    for (const [what, n] of Object.entries(seen)) expect(n, what).to.be.above(0);
  });

  it('answers an undecodable body with the inline message', async () => {
    const valid = encodeWriteRequest([{ labels: { __name__: 'up' }, samples: [{ value: 1, timestampMs: nowMs }] }]);
    for (const body of [Buffer.concat([valid, Buffer.from([0x0a, 0x7f])]), Buffer.from([0xff, 0xff, 0xff])]) {
      const expected = inline(body, 't1', resolver([]));
      expect(expected.ok).to.equal(false);
      expectSame(await pool.convertRemoteWrite(body, 't1', resolver([]), 't1'), expected);
    }
  });

  it('is converted by the ingest pipeline inline below its offload threshold and in the pool at it, with the same result', async () => {
    const body = encodeWriteRequest(
      Array.from({ length: 40 }, (_, i) => ({
        labels: { __name__: 'requests_total', job: 'api', instance: `host-${i}`, code: '200' },
        samples: [
          { value: i, timestampMs: nowMs - 1000 },
          { value: i, timestampMs: nowMs - 200 * day },
        ],
        histograms: [{ countInt: 1, sum: 1, schema: -53, timestampMs: nowMs }],
      })),
      [{ type: 1, family: 'requests_total', help: 'Requests.', unit: '' }],
    );
    const expected = inline(body, 't1', resolver([]));
    if (!expected.ok) return expect.fail(expected.error);
    expect([expected.value.batch.rowCount, expected.value.skippedHistograms, expected.value.metadata.length]).to.deep.equal([40, 40, 1]);
    for (const [minBytes, workers] of [
      [body.length + 1, 0],
      [body.length, 1],
    ] as const) {
      const own = new ConvertPool({ limits, settings, size: 1, now: () => nowMs });
      try {
        const writer: DurableWriter = { submit: () => Promise.resolve(ok(undefined)) };
        const clock = new ManualClock();
        const pipeline = new IngestPipeline({
          writer,
          metrics: gatewayMetrics(new Registry(), () => undefined),
          items: limits,
          limits: {
            limiter: new IngestLimiter(settings, { count: 1 }, clock),
            rejected: new RejectedUsage({ write: () => Promise.resolve(ok(undefined)) }, { flushMs: 60_000 }, clock),
          },
          settings,
          gate: defaultDecodeGate(),
          pool: own,
          offloadMinBytes: minBytes,
        });
        const got = await pipeline.convertRemoteWrite(Buffer.from(body), 't1', resolver([]), inline);
        expectSame(got, expected);
        expect(own.workers).to.equal(workers);
      } finally {
        await own.stop();
      }
    }
  });
});
