// Prometheus remote write on the gateway's HTTP port against embedded
// ClickHouse: a request with every kind of series is read back column by
// column; tenant selection; bad input; nothing of a refused request stored.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import { startGatewayWith } from '../../../gateway/gateway.ts';
import { clickHouseRowSink } from '../../../gateway/writer/clickhouse-row-sink.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import {
  basicAuth,
  encodeWriteRequest,
  metadataType,
  pushRemoteWrite,
  remoteWriteHeaders,
  snappyBlock,
  withStaleMarkers,
} from '../../../support/remote-write-request.ts';
import type { SeriesSpec } from '../../../support/remote-write-request.ts';
import { gatewayConfig } from '../../../support/default-config.ts';
import { defaultOffloadMinBytes } from '../../../gateway/ingest/ingest-pipeline.ts';

const stale = '9218868437227405314'; // 0x7ff0000000000002
const sentinel = 1234.0625;

describe('gateway: Prometheus remote write', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  const limit = 256 * 1024;
  before(async () => {
    gw = await startTestGateway('remote_write', { maxRequestBytes: limit });
  });
  after(async () => {
    await gw.close();
  });

  const now = Date.now();
  const t = now - 30_000;
  /** A series of one sample, tagged with `run` so that each test finds only its own rows. */
  const series = (run: string, name = 'up'): SeriesSpec => ({ labels: { __name__: name, job: 'node', run }, samples: [{ value: 1, timestampMs: t }] });
  const body = (...s: SeriesSpec[]): Buffer => snappyBlock(encodeWriteRequest(s));
  const stored = async (run: string): Promise<{ tenant_id: string; metric_name: string }[]> =>
    select(gw.store, `SELECT tenant_id, metric_name FROM ${gw.store.database}.metrics WHERE attributes['run'] = {run:String} ORDER BY tenant_id, metric_name`, {
      run,
    });
  const bearer = (key: string, extra: Record<string, string> = {}): Record<string, string> => remoteWriteHeaders({ authorization: `Bearer ${key}`, ...extra });

  it('stores counters, gauges, classic histogram series, a native histogram and a stale marker as sent; drops exemplars; keeps metadata; usage and discovery count them', async () => {
    const run = 'full';
    const common = { job: 'checkout', instance: 'pod-1:8080', run };
    const request = encodeWriteRequest(
      [
        {
          labels: { __name__: 'http_requests_total', ...common, code: '200' },
          samples: [
            { value: 10, timestampMs: t },
            { value: 12, timestampMs: t + 15_000 },
          ],
          exemplars: [{ labels: { trace_id: '0af7651916cd43dd8448eb211c80319c' }, value: 1, timestampMs: t }],
        },
        {
          labels: { __name__: 'queue_depth', ...common },
          samples: [
            { value: -3.5, timestampMs: t },
            { value: sentinel, timestampMs: t + 15_000 },
          ],
        },
        { labels: { __name__: 'rpc_seconds_bucket', ...common, le: '0.1' }, samples: [{ value: 4, timestampMs: t }] },
        { labels: { __name__: 'rpc_seconds_bucket', ...common, le: '+Inf' }, samples: [{ value: 6, timestampMs: t }] },
        { labels: { __name__: 'rpc_seconds_sum', ...common }, samples: [{ value: 0.9, timestampMs: t }] },
        { labels: { __name__: 'rpc_seconds_count', ...common }, samples: [{ value: 6, timestampMs: t }] },
        { labels: { __name__: 'gc_seconds', ...common, quantile: '0.99' }, samples: [{ value: 0.02, timestampMs: t }] },
        {
          labels: { __name__: 'native_seconds', ...common },
          histograms: [
            {
              countInt: 7,
              sum: 3.5,
              schema: 1,
              zeroThreshold: 0.001,
              zeroCountInt: 1,
              timestampMs: t,
              positiveSpans: [
                { offset: 0, length: 2 },
                { offset: 1, length: 1 },
              ],
              positiveDeltas: [2, 1, -2],
            },
          ],
        },
      ],
      [
        { type: metadataType.counter, family: 'http_requests_total', help: 'Requests served.', unit: '' },
        { type: metadataType.histogram, family: 'rpc_seconds', help: 'RPC latency.', unit: 'seconds' },
      ],
    );
    const res = await pushRemoteWrite(gw.httpUrl, snappyBlock(withStaleMarkers(request, sentinel)), bearer(keys.tenantA));
    expect(res.status, res.text).to.equal(204);
    expect(res.text).to.equal('');

    const rows = await select<Record<string, unknown>>(
      gw.store,
      `
      SELECT tenant_id, metric_name, metric_type, temporality, service_name, resource_attributes, scope_name, scope_version, attributes,
        toString(timestamp) AS ts, toString(reinterpretAsUInt64(value)) AS bits
      FROM ${gw.store.database}.metrics WHERE attributes['run'] = 'full' AND metric_type = 'gauge' ORDER BY metric_name, timestamp, attributes['le']`,
    );
    const ns = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '000000');
    const bitsOf = (value: number): string => {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(value);
      return b.readBigUInt64LE().toString();
    };
    const resource = { 'service.name': 'checkout', 'service.instance.id': 'pod-1:8080' };
    const row = (name: string, bits: string, ms: number, attributes: Record<string, string> = {}): Record<string, unknown> => ({
      tenant_id: 'tenant-a',
      metric_name: name,
      metric_type: 'gauge',
      temporality: 'unspecified',
      service_name: 'checkout',
      resource_attributes: resource,
      scope_name: 'tenantry.prometheus.remote_write',
      scope_version: '1.0',
      attributes: { ...attributes, run },
      ts: ns(ms),
      bits,
    });
    // Values compared by their bits: the stale marker must keep its NaN payload.
    expect(rows).to.deep.equal([
      row('gc_seconds', bitsOf(0.02), t, { quantile: '0.99' }),
      row('http_requests_total', bitsOf(10), t, { code: '200' }),
      row('http_requests_total', bitsOf(12), t + 15_000, { code: '200' }),
      row('queue_depth', bitsOf(-3.5), t),
      row('queue_depth', stale, t + 15_000),
      row('rpc_seconds_bucket', bitsOf(6), t, { le: '+Inf' }),
      row('rpc_seconds_bucket', bitsOf(4), t, { le: '0.1' }),
      row('rpc_seconds_count', bitsOf(6), t),
      row('rpc_seconds_sum', bitsOf(0.9), t),
    ]);

    const native = await select<Record<string, unknown>>(
      gw.store,
      `
      SELECT metric_name, metric_type, temporality, count, sum, exp_scale, exp_zero_count, exp_zero_threshold, exp_positive_offset, exp_positive_bucket_counts,
        exp_negative_bucket_counts, min, max, service_name FROM ${gw.store.database}.metrics WHERE attributes['run'] = 'full' AND metric_type != 'gauge'`,
    );
    expect(native).to.deep.equal([
      {
        metric_name: 'native_seconds',
        metric_type: 'exponential_histogram',
        temporality: 'cumulative',
        count: 7,
        sum: 3.5,
        exp_scale: 1,
        exp_zero_count: 1,
        exp_zero_threshold: 0.001,
        exp_positive_offset: -1,
        exp_positive_bucket_counts: [2, 3, 0, 1],
        exp_negative_bucket_counts: [],
        min: null,
        max: null,
        service_name: 'checkout',
      },
    ]);
    const metadata = await select(
      gw.store,
      `SELECT tenant_id, metric_family, type, help, unit FROM ${gw.store.database}.prometheus_metadata FINAL WHERE tenant_id = 'tenant-a' ORDER BY metric_family`,
    );
    expect(metadata).to.deep.equal([
      { tenant_id: 'tenant-a', metric_family: 'http_requests_total', type: 'counter', help: 'Requests served.', unit: '' },
      { tenant_id: 'tenant-a', metric_family: 'rpc_seconds', type: 'histogram', help: 'RPC latency.', unit: 'seconds' },
    ]);
    const usage = await select<{ n: string }>(
      gw.store,
      `SELECT toString(sum(metric_points)) AS n FROM ${gw.store.database}.usage_daily WHERE tenant_id = 'tenant-a'`,
    );
    expect(Number(usage[0]?.n)).to.be.at.least(10);
    const discovered = await select(gw.store, `SELECT tenant_id FROM ${gw.store.database}.tenants WHERE tenant_id = 'tenant-a' GROUP BY tenant_id`);
    expect(discovered).to.deep.equal([{ tenant_id: 'tenant-a' }]);
  });

  it('answers a metadata-only request 204 and a changed help replaces the old one', async () => {
    const send = (help: string): Promise<{ status: number }> =>
      pushRemoteWrite(
        gw.httpUrl,
        snappyBlock(encodeWriteRequest([], [{ type: metadataType.gauge, family: 'meta_only', help, unit: '' }])),
        bearer(keys.admin, { 'X-Scope-OrgID': 'meta' }),
      );
    expect((await send('first')).status).to.equal(204);
    expect((await send('second')).status).to.equal(204);
    const rows = await select(gw.store, `SELECT help FROM ${gw.store.database}.prometheus_metadata FINAL WHERE tenant_id = 'meta'`);
    expect(rows).to.deep.equal([{ help: 'second' }]);
  });

  it('converts a body of the offload threshold or more (decoded) in a conversion worker: rows, metadata and skipped histograms as inline', async () => {
    // A gateway of the default 4 MiB limit (the suite's refuses bodies above the 256 KiB threshold), with its own database.
    const big = await startTestGateway('remote_write_pooled');
    try {
      const series: SeriesSpec[] = Array.from({ length: 2000 }, (_, i) => ({
        labels: { __name__: 'pooled_total', job: 'api', run: 'pooled', i: String(i), pad: 'p'.repeat(200) },
        samples: [{ value: i, timestampMs: t }],
      }));
      series.push({ labels: { __name__: 'pooled_custom', run: 'pooled' }, histograms: [{ countInt: 1, sum: 1, schema: -53, timestampMs: t }] });
      const encoded = encodeWriteRequest(series, [{ type: metadataType.counter, family: 'pooled_total', help: 'Pooled.', unit: '' }]);
      expect(encoded.length).to.be.at.least(defaultOffloadMinBytes);
      const res = await pushRemoteWrite(big.httpUrl, snappyBlock(encoded), bearer(keys.tenantA));
      expect(res.status, res.text).to.equal(204);
      const counted = await select<{ n: string }>(
        big.store,
        `SELECT toString(count()) AS n FROM ${big.store.database}.metrics WHERE attributes['run'] = 'pooled' AND service_name = 'api'`,
      );
      expect(counted).to.deep.equal([{ n: '2000' }]);
      const metadata = await select(big.store, `SELECT help FROM ${big.store.database}.prometheus_metadata FINAL WHERE metric_family = 'pooled_total'`);
      expect(metadata).to.deep.equal([{ help: 'Pooled.' }]);
      const skipped = await big.registry.getSingleMetric('tenantry_gateway_rejected_items_total')?.get();
      expect(skipped?.values.find((v) => v.labels['reason'] === 'custom_bucket_histogram')?.value).to.equal(1);
    } finally {
      await big.close();
    }
  });

  describe('tenant selection', () => {
    it('takes the tenant of a single-tenant key (Bearer, Basic password, x-api-key) and X-Scope-OrgID for a key of several', async () => {
      expect((await pushRemoteWrite(gw.httpUrl, body(series('sel')), bearer(keys.tenantA))).status).to.equal(204);
      expect((await pushRemoteWrite(gw.httpUrl, body(series('sel', 'basic')), remoteWriteHeaders({ authorization: basicAuth(keys.tenantA) }))).status).to.equal(
        204,
      );
      expect((await pushRemoteWrite(gw.httpUrl, body(series('sel', 'xkey')), remoteWriteHeaders({ 'x-api-key': keys.tenantA }))).status).to.equal(204);
      expect(
        (
          await pushRemoteWrite(
            gw.httpUrl,
            body(series('sel', 'org')),
            remoteWriteHeaders({ authorization: basicAuth(keys.admin), 'X-Scope-OrgID': 'tenant-b' }),
          )
        ).status,
      ).to.equal(204);
      expect(await stored('sel')).to.deep.equal([
        { tenant_id: 'tenant-a', metric_name: 'basic' },
        { tenant_id: 'tenant-a', metric_name: 'up' },
        { tenant_id: 'tenant-a', metric_name: 'xkey' },
        { tenant_id: 'tenant-b', metric_name: 'org' },
      ]);
    });

    it('refuses: no key 401, several tenants without X-Scope-OrgID 400 naming it, a tenant outside the key 404, a read-only key 403; nothing stored', async () => {
      const missing = await pushRemoteWrite(gw.httpUrl, body(series('refused')), remoteWriteHeaders());
      expect(missing.status).to.equal(401);
      const several = await pushRemoteWrite(gw.httpUrl, body(series('refused')), bearer(keys.admin));
      expect(several.status).to.equal(400);
      expect(several.text).to.contain('X-Scope-OrgID');
      const outside = await pushRemoteWrite(gw.httpUrl, body(series('refused')), bearer(keys.tenantA, { 'X-Scope-OrgID': 'tenant-b' }));
      expect(outside.status).to.equal(404);
      expect(outside.text).to.equal('tenant "tenant-b" not found\n');
      const readOnly = await pushRemoteWrite(
        gw.httpUrl,
        body(series('refused')),
        remoteWriteHeaders({ authorization: basicAuth(keys.readOnly), 'X-Scope-OrgID': 'tenant-a' }),
      );
      expect(readOnly.status).to.equal(403);
      expect(await stored('refused')).to.deep.equal([]);
    });
  });

  describe('bad input', () => {
    const push = (b: Buffer | string, headers = bearer(keys.tenantA)): Promise<{ status: number; text: string }> =>
      pushRemoteWrite(gw.httpUrl, Buffer.from(b), headers);

    it('400 for a body that is not snappy, or snappy of something that is not a WriteRequest; nothing stored', async () => {
      const notSnappy = await push(Buffer.concat([Buffer.from([0x40]), randomBytes(100)]));
      expect(notSnappy.status).to.equal(400);
      expect(notSnappy.text).to.match(/^invalid snappy block/);
      const notProtobuf = await push(snappyBlock(Buffer.from([0x0a, 0x7f, 0x01, 0x02])));
      expect(notProtobuf.status).to.equal(400);
      expect(notProtobuf.text).to.match(/^invalid protobuf: /);
      const good = encodeWriteRequest([series('bad')]);
      const truncated = await push(snappyBlock(good.subarray(0, good.length - 3)));
      expect(truncated.status).to.equal(400);
      expect(await stored('bad')).to.deep.equal([]);
    });

    it('415 for another content type, encoding or remote write version; 405 for GET', async () => {
      const b = body(series('type'));
      expect((await push(b, { ...bearer(keys.tenantA), 'content-type': 'application/json' })).status).to.equal(415);
      expect((await push(b, { ...bearer(keys.tenantA), 'content-encoding': 'gzip' })).status).to.equal(415);
      const v2 = await push(b, { ...bearer(keys.tenantA), 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request' });
      expect(v2.status).to.equal(415);
      expect(v2.text).to.contain('io.prometheus.write.v2.Request');
      expect((await fetch(`${gw.httpUrl}/api/v1/push`, { headers: bearer(keys.tenantA) })).status).to.equal(405);
      expect(await stored('type')).to.deep.equal([]);
    });

    it('413 over the body limit: compressed, and decompressed as the snappy header declares it; nothing stored', async () => {
      const many = (n: number, prefix: string): SeriesSpec[] =>
        Array.from({ length: n }, (_, i) => ({
          labels: { __name__: 'big', run: 'large', i: `${prefix}-${i}-${randomBytes(24).toString('hex')}` },
          samples: [{ value: i, timestampMs: t }],
        }));
      // Random label values hardly compress: the compressed body itself is over the limit.
      const compressed = snappyBlock(encodeWriteRequest(many(5000, 'c')));
      expect(compressed.length).to.be.greaterThan(limit);
      const over = await push(compressed);
      expect(over.status).to.equal(413);
      // Repetitive labels compress well: under the limit on the wire, over it once decompressed.
      const repetitive = encodeWriteRequest(
        Array.from({ length: 5000 }, () => ({ labels: { __name__: 'big', run: 'large', pad: 'x'.repeat(200) }, samples: [{ value: 1, timestampMs: t }] })),
      );
      const block = snappyBlock(repetitive);
      expect(block.length).to.be.lessThan(limit);
      expect(repetitive.length).to.be.greaterThan(limit);
      const inflated = await push(block);
      expect(inflated.status).to.equal(413);
      expect(inflated.text).to.contain('decompressed body');
      expect(await stored('large')).to.deep.equal([]);
    });

    it('503 + Retry-After when the bytes in flight would pass TENANTRY_MAX_INFLIGHT_BYTES (Prometheus resends a 5xx); nothing stored', async () => {
      const parsed = parseKeys(JSON.stringify([{ key: keys.tenantA, scopes: ['ingest'], tenants: ['tenant-a'] }]), 'test keys');
      if (!parsed.ok) throw new Error(parsed.error);
      const logDir = mkdtempSync(join(tmpdir(), 'tenantry-wal-'));
      const proc = await testProcessContext(gw.store, { keys: parsed.value });
      const small = await startGatewayWith(
        proc.ctx,
        gatewayConfig({
          maxRequestBytes: limit,
          maxInflightBytes: 16 * 1024,
          writer: { maxBatchRows: 50_000, maxBatchBytes: 16 * 1024 * 1024, maxBatchDelayMs: 5, maxLogBytes: 64 * 1024 * 1024, logDir },
        }),
        clickHouseRowSink(gw.store),
      );
      try {
        const big = body(
          ...Array.from({ length: 400 }, (_, i) => ({
            labels: { __name__: 'inflight', run: 'inflight', i: randomBytes(40).toString('hex') },
            samples: [{ value: i, timestampMs: t }],
          })),
        );
        expect(big.length).to.be.greaterThan(16 * 1024);
        const res = await pushRemoteWrite(`http://127.0.0.1:${small.ports['otlpHttp'] ?? 0}`, big, bearer(keys.tenantA));
        expect(res.status, res.text).to.equal(503);
        expect(res.retryAfter).to.equal('1');
        await small.flush();
      } finally {
        await small.stop();
        proc.stop();
        rmSync(logDir, { recursive: true, force: true });
      }
      expect(await stored('inflight')).to.deep.equal([]);
    });

    it('400 naming the samples outside the time window; the others are stored', async () => {
      const res = await push(
        body({
          labels: { __name__: 'window', run: 'window' },
          samples: [
            { value: 1, timestampMs: t },
            { value: 2, timestampMs: now - 400 * 86_400_000 },
          ],
        }),
      );
      expect(res.status).to.equal(400);
      expect(res.text).to.contain('timestamp');
      expect(await stored('window')).to.deep.equal([{ tenant_id: 'tenant-a', metric_name: 'window' }]);
    });
  });
});
