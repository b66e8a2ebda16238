// The gateway inside a real `tenantry all` process: SIGKILL durability
// (also under load from several clients, every acknowledged item exactly
// once after the restart, with either write-ahead-log sync), graceful
// SIGTERM, and a 512 MiB gzip bomb.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { request } from 'node:http';
import { expect } from 'chai';
import { makeSpans, sendSpans } from './support/otel-clients.ts';
import { logsProtobuf, metricsProtobuf, post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';
import { processKey, queryDataDir, residentBytes, startTenantry } from './support/tenantry-process.ts';
import { gzipZeros } from './support/gzip-zeros.ts';

function postRaw(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('gateway: inside the tenantry process', function () {
  this.timeout(120_000);
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tenantry-gw-'));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged request after SIGKILL, restarts on the data directory, and flushes on SIGTERM', async () => {
    const first = await startTenantry(dataDir, { TENANTRY_BATCH_MAX_DELAY_MS: '200' });
    const acknowledged: string[] = [];
    const sends = Array.from({ length: 20 }, async (_, i) => {
      const name = `durable-${i}`;
      const json = tracesJson({ 'tenant.id': 'durable' }, [{ name }]);
      const res = await post(`${first.httpUrl}/v1/traces`, tracesProtobuf(json), protobufHeaders(processKey));
      if (res.status === 200) acknowledged.push(name);
    });
    await Promise.all(sends);
    first.child.kill('SIGKILL');
    expect(await first.exited).to.equal('SIGKILL');
    expect(acknowledged).to.have.length(20);
    // A batch staged for an INSERT the kill interrupted: never acknowledged, removed on start.
    const stale = join(dataDir, 'insert-spool', 'spans-interrupted.bin');
    writeFileSync(stale, Buffer.alloc(64));

    const second = await startTenantry(dataDir);
    expect(existsSync(stale)).to.equal(false);
    const spans = makeSpans({ 'service.name': 'after-restart', 'tenant.id': 'durable' });
    const result = await sendSpans('grpc', { httpUrl: second.httpUrl, grpcUrl: second.grpcUrl, key: processKey }, spans);
    expect(result.code, String(result.error)).to.equal(0);
    second.child.kill('SIGTERM');
    expect(await second.exited).to.equal(0);
    expect(second.output()).to.include('"stopped"');

    const rows = await queryDataDir<{ span_name: string }>(dataDir, "SELECT span_name FROM tenantry.spans WHERE tenant_id = 'durable' ORDER BY span_name");
    const names = rows.map((r) => r.span_name);
    for (const name of acknowledged) expect(names).to.include(name);
    expect(names.filter((n) => !n.startsWith('durable-'))).to.have.members(['GET /checkout', 'SELECT carts']);
  });

  for (const sync of ['write', 'fsync'] as const)
    it(`keeps every item acknowledged under load from several clients exactly once after kill -9 and a restart (TENANTRY_WAL_SYNC=${sync})`, async () => {
      // Blocks are cut every 100 ms, so at the kill some are in ClickHouse, some mid-INSERT and some only in the log.
      const first = await startTenantry(dataDir, { TENANTRY_BATCH_MAX_DELAY_MS: '100', TENANTRY_WAL_SYNC: sync });
      const acknowledged = { spans: [] as string[], logs: [] as string[], points: [] as string[] };
      let requests = 0;
      let killed = false;
      let markEnough: () => void = () => undefined;
      const enough = new Promise<void>((resolve) => {
        markEnough = resolve;
      });
      const bodies = {
        spans: (id: string) =>
          [
            '/v1/traces',
            tracesProtobuf(
              tracesJson(
                { 'tenant.id': 'kill' },
                Array.from({ length: 10 }, (_, j) => ({ name: `${id}-${j}` })),
              ),
            ),
          ] as const,
        logs: (id: string) =>
          [
            '/v1/logs',
            logsProtobuf(
              { 'tenant.id': 'kill' },
              Array.from({ length: 10 }, (_, j) => ({ body: `${id}-${j}` })),
            ),
          ] as const,
        points: (id: string) =>
          [
            '/v1/metrics',
            metricsProtobuf(
              { 'tenant.id': 'kill' },
              Array.from({ length: 10 }, (_, j) => ({ point: `${id}-${j}` })),
            ),
          ] as const,
      };
      const clients = (['spans', 'logs', 'points'] as const).flatMap((signal) =>
        [0, 1].map(async (client) => {
          for (let i = 0; !killed && i < 1000; i++) {
            const id = `${signal}-${client}-${i}`;
            const [path, body] = bodies[signal](id);
            const res = await post(`${first.httpUrl}${path}`, body, protobufHeaders(processKey)).catch(() => undefined);
            if (res?.status !== 200) continue;
            for (let j = 0; j < 10; j++) acknowledged[signal].push(`${id}-${j}`);
            if (++requests === 120) markEnough();
          }
        }),
      );
      await enough;
      first.child.kill('SIGKILL');
      killed = true;
      expect(await first.exited).to.equal('SIGKILL');
      await Promise.all(clients);

      const second = await startTenantry(dataDir);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
      const counted = async (sql: string): Promise<Map<string, number>> =>
        new Map((await queryDataDir<{ id: string; n: string }>(dataDir, sql)).map((r) => [r.id, Number(r.n)]));
      const stored = {
        spans: await counted("SELECT span_name AS id, toString(count()) AS n FROM tenantry.spans WHERE tenant_id = 'kill' GROUP BY id"),
        logs: await counted("SELECT body AS id, toString(count()) AS n FROM tenantry.logs WHERE tenant_id = 'kill' GROUP BY id"),
        points: await counted("SELECT attributes['point'] AS id, toString(count()) AS n FROM tenantry.metrics WHERE tenant_id = 'kill' GROUP BY id"),
      };
      for (const signal of ['spans', 'logs', 'points'] as const) {
        expect(acknowledged[signal].length, signal).to.be.greaterThan(0);
        const missing = acknowledged[signal].filter((id) => stored[signal].get(id) !== 1);
        expect(missing, `${signal} acknowledged but not stored exactly once`).to.deep.equal([]);
        // Unacknowledged requests may or may not have been logged before the kill; none is stored twice.
        expect(
          [...stored[signal].values()].filter((n) => n !== 1),
          `${signal} stored twice`,
        ).to.deep.equal([]);
      }
    });

  it('stores what it acknowledges when TENANTRY_DATA_DIR is relative, as the `npm start` default is', async () => {
    const tenantry = await startTenantry(relative(process.cwd(), dataDir));
    const json = tracesJson({ 'tenant.id': 'relative' }, [{ name: 'relative-dir' }]);
    expect((await post(`${tenantry.httpUrl}/v1/traces`, tracesProtobuf(json), protobufHeaders(processKey))).status).to.equal(200);
    tenantry.child.kill('SIGTERM');
    expect(await tenantry.exited).to.equal(0);
    const rows = await queryDataDir<{ span_name: string }>(dataDir, "SELECT span_name FROM tenantry.spans WHERE tenant_id = 'relative'");
    expect(rows).to.deep.equal([{ span_name: 'relative-dir' }]);
  });

  it('answers a 512 MiB gzip bomb with 413 quickly while memory barely moves', async () => {
    const tenantry = await startTenantry(dataDir);
    try {
      const bomb = await gzipZeros(512 * 1024 * 1024);
      const before = await residentBytes(tenantry.httpUrl);
      const started = Date.now();
      const status = await postRaw(`${tenantry.httpUrl}/v1/traces`, bomb, { ...protobufHeaders(processKey), 'content-encoding': 'gzip' });
      const elapsed = Date.now() - started;
      const after = await residentBytes(tenantry.httpUrl);
      expect(status).to.equal(413);
      expect(elapsed).to.be.below(3000);
      // The default limit is 16 MiB: growth stays in that order, far from 512 MiB.
      expect(after - before).to.be.below(64 * 1024 * 1024);
    } finally {
      tenantry.child.kill('SIGTERM');
      await tenantry.exited;
    }
  });
});
