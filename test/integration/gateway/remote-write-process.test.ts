// Prometheus remote write into a real `tenantry all` process: the /v1
// timeseries API sees remote-written series; a tenant over its ingest limit
// is answered 429 + Retry-After with nothing stored, before and after the
// body is decoded; acknowledged pushes survive kill -9 and a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { queryDataDir } from './support/tenantry-process.ts';
import { basicAuth, encodeWriteRequest, pushRemoteWrite, remoteWriteHeaders, snappyBlock } from '../../../support/remote-write-request.ts';
import type { SeriesSpec } from '../../../support/remote-write-request.ts';

const keys = {
  admin: 'rw-admin-key-0123456789',
  a: 'rw-tenant-a-key-0123456789',
  limited: 'rw-limited-key-0123456789',
  reader: 'rw-reader-key-0123456789',
} as const;

const keyText = JSON.stringify([
  { key: keys.admin, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
  { key: keys.a, scopes: ['ingest'], tenants: ['rw-a'] },
  { key: keys.limited, scopes: ['ingest'], tenants: ['rw-limited'] },
  { key: keys.reader, scopes: ['read'], tenants: ['rw-a'] },
]);

// Per-tenant labels on: the throttling test reads a tenant's series.
const start = (dataDir: string, env: Record<string, string> = {}): TenantryProcess =>
  startTenantry(['all'], testEnvironment(dataDir, { TENANTRY_API_KEYS: keyText, TENANTRY_METRICS_TENANT_LABELS: 'on', ...env }));
const urls = (ports: Record<string, number>): { gateway: string; api: string } => ({
  gateway: `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`,
  api: `http://127.0.0.1:${ports['api'] ?? 0}`,
});
const body = (series: readonly SeriesSpec[]): Buffer => snappyBlock(encodeWriteRequest(series));

/**
 * Reads until `done` holds or `withinMs` pass, and answers the last reading: an acknowledged row is queryable once
 * its block is inserted, which no event announces. Bounded by time, not by a count of reads: the first INSERT into
 * a fresh store takes about a second here and several times that on a slower machine.
 */
async function readUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, withinMs = 30_000): Promise<T> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value) || performance.now() > deadline) return value;
    await new Promise((resolve) => {
      setTimeout(resolve, 100);
    });
  }
}

describe('gateway: Prometheus remote write in the tenantry process', function () {
  this.timeout(120_000);

  describe('queries and limits', () => {
    let dataDir: string;
    let tenantry: TenantryProcess;
    let gateway: string;
    let api: string;
    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'tenantry-rw-'));
      tenantry = start(dataDir);
      ({ gateway, api } = urls(await tenantry.started()));
      // 1 KiB/s and a 1 KiB burst: one request of a few KiB puts the tenant in debt for seconds.
      const put = await fetch(`${api}/v1/tenants/rw-limited`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ limits: { ingestBytesPerSecond: 1024, ingestBurstBytes: 1024 } }),
      });
      expect(put.status, await put.text()).to.equal(200);
    });
    after(async () => {
      await tenantry.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const timeseries = async (
      tenant: string,
      key: string,
      metrics: string[],
      groupBy: string[] = [],
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      const nowS = Date.now() / 1000;
      const res = await fetch(`${api}/v1/tenants/${tenant}/timeseries`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ startTime: nowS - 600, endTime: nowS + 60, interval: 3600, queries: [{ metrics, groupBy, operator: 'sum' }] }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    it('serves remote-written series through /v1/tenants/:id/timeseries, grouped by the job label as service.name', async () => {
      const t = Date.now() - 10_000;
      const series: SeriesSpec[] = [
        { labels: { __name__: 'rw_requests_total', job: 'cart', instance: 'a:1', code: '200' }, samples: [{ value: 5, timestampMs: t }] },
        { labels: { __name__: 'rw_requests_total', job: 'web', instance: 'b:1', code: '500' }, samples: [{ value: 7, timestampMs: t }] },
      ];
      const res = await pushRemoteWrite(gateway, body(series), remoteWriteHeaders({ authorization: basicAuth(keys.a) }));
      expect(res.status, res.text).to.equal(204);
      // The API reads ClickHouse; an acknowledged row is there once its block is inserted, which no event announces: poll (bounded).
      const reply = await readUntil(
        () => timeseries('rw-a', keys.reader, ['rw_requests_total'], ['service.name']),
        (r) => (r.body['series'] as unknown[] | undefined)?.length === 2,
      );
      expect(reply.status).to.equal(200);
      const found = (reply.body['series'] as { labels: Record<string, string>; values: number[]; emptyBuckets: number[] }[]).map((s) => [
        s.labels['service.name'],
        s.values.filter((_, i) => !s.emptyBuckets.includes(i)),
      ]);
      expect(found).to.have.deep.members([
        ['cart', [5]],
        ['web', [7]],
      ]);
      // A key of tenant rw-a asking for another tenant learns nothing.
      expect((await timeseries('rw-b', keys.reader, ['rw_requests_total'])).status).to.equal(404);
    });

    it('answers 429 + Retry-After to a tenant over its ingest limit before its body is read, whether its key names it or X-Scope-OrgID does; nothing of them stored', async () => {
      const t = Date.now() - 10_000;
      const request = (run: string): Buffer =>
        body(
          Array.from({ length: 40 }, (_, i) => ({
            labels: { __name__: `limited_${run}`, job: 'load', series: `s-${i}-${'x'.repeat(40)}` },
            samples: [{ value: i, timestampMs: t }],
          })),
        );
      const first = await pushRemoteWrite(gateway, request('first'), remoteWriteHeaders({ authorization: `Bearer ${keys.limited}` }));
      expect(first.status, first.text).to.equal(204);
      const before = await pushRemoteWrite(gateway, request('before'), remoteWriteHeaders({ authorization: `Bearer ${keys.limited}` }));
      expect(before.status, before.text).to.equal(429);
      expect(Number(before.retryAfter)).to.be.at.least(1);
      expect(before.text).to.contain('ingestBytesPerSecond');
      const after = await pushRemoteWrite(
        gateway,
        request('after'),
        remoteWriteHeaders({ authorization: `Bearer ${keys.admin}`, 'X-Scope-OrgID': 'rw-limited' }),
      );
      expect(after.status, after.text).to.equal(429);
      expect(Number(after.retryAfter)).to.be.at.least(1);
      const metrics = (await (await fetch(`${gateway}/metrics`)).text())
        .split('\n')
        .filter((l) => l.startsWith('tenantry_gateway_throttled_requests_total{') && l.includes('tenant="rw-limited"'));
      // The tenant is known before the body either way (the key's only tenant, or X-Scope-OrgID): both refused unread.
      expect(metrics.map((l) => /stage="(\w+)"/.exec(l)?.[1]).sort()).to.deep.equal(['before_body']);
      expect(metrics.map((l) => Number(l.split(' ').pop()))).to.deep.equal([2]);
      // The first request's rows arrive (poll, bounded: no event); the refused ones never were in the log.
      const stored = await readUntil(
        () => timeseries('rw-limited', keys.admin, ['limited_first', 'limited_before', 'limited_after']),
        (r) => (r.body['series'] as unknown[] | undefined)?.length === 1,
      );
      expect((stored.body['metadata'] as { name: string }[]).map((m) => m.name)).to.deep.equal(['limited_first']);
    });
  });

  it('keeps every acknowledged push after kill -9 and a restart, each sample exactly once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-rw-kill-'));
    try {
      // Blocks are cut every 200 ms: at the kill some pushes are in ClickHouse, some only in the write-ahead log.
      const first = start(dataDir, { TENANTRY_BATCH_MAX_DELAY_MS: '200' });
      const { gateway } = urls(await first.started());
      const t = Date.now() - 10_000;
      const statuses = await Promise.all(
        Array.from(
          { length: 20 },
          async (_, i) =>
            (
              await pushRemoteWrite(
                gateway,
                body([
                  {
                    labels: { __name__: 'durable', job: 'kill', push: String(i) },
                    samples: [
                      { value: i, timestampMs: t },
                      { value: i + 0.5, timestampMs: t + 1000 },
                    ],
                  },
                ]),
                remoteWriteHeaders({ authorization: basicAuth(keys.a) }),
              )
            ).status,
        ),
      );
      expect(statuses).to.deep.equal(Array.from({ length: 20 }, () => 204));
      await first.stop('SIGKILL');
      const second = start(dataDir);
      await second.started();
      expect(await second.stop('SIGTERM')).to.equal(0);
      const rows = await queryDataDir<{ push: string; n: string; values: number[] }>(
        dataDir,
        "SELECT attributes['push'] AS push, toString(count()) AS n, arraySort(groupArray(value)) AS values FROM tenantry.metrics WHERE tenant_id = 'rw-a' AND metric_name = 'durable' GROUP BY push ORDER BY toUInt32(push)",
      );
      expect(rows).to.deep.equal(Array.from({ length: 20 }, (_, i) => ({ push: String(i), n: '2', values: [i, i + 0.5] })));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
