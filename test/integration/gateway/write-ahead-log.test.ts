// The write-ahead log against real embedded ClickHouse: a crash between a
// block's INSERT and the log's truncation stores nothing twice (rows, usage
// and discovery alike), nor does one between the INSERTs of a split block's
// halves; a full disk answers 503 and unready, then recovers by itself with
// nothing acknowledged lost; and the number of parts a table gets per second
// does not grow with the number of clients.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RowSink } from '../../../gateway/writer/row-sink.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { fail } from '../../../src/result.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { keys, select, startTestGateway } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { post, protobufHeaders, statusOf, tracesJson, tracesProtobuf } from './support/payloads.ts';

/** ClickHouse down until released: every INSERT fails as unreachable, so the log has to hold everything. */
function downUntilReleased(real: RowSink): { sink: RowSink; release: () => void } {
  let down = true;
  return {
    sink: {
      insert: (table, chunks, token) =>
        down ? Promise.resolve(fail({ kind: 'unavailable', message: 'connection refused' })) : real.insert(table, chunks, token),
    },
    release: () => {
      down = false;
    },
  };
}

const spanBody = (tenant: string, name: string, spans = 1): Buffer =>
  tracesProtobuf(
    tracesJson(
      { 'tenant.id': tenant },
      Array.from({ length: spans }, (_, i) => ({ name: spans === 1 ? name : `${name}-${i}` })),
    ),
  );

describe('gateway: write-ahead log on real ClickHouse', function () {
  this.timeout(60_000);

  describe("a crash after a block's INSERT and before the log is truncated", () => {
    let store: Store;
    let dir: string;
    const gateways: TestGateway[] = [];
    before(async () => {
      store = await migratedStore('wal_crash');
      dir = mkdtempSync(join(tmpdir(), 'tenantry-wal-crash-'));
    });
    after(async () => {
      for (const gw of gateways) await gw.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('replays the block with its token: rows, usage and tenant discovery count it once', async () => {
      let inserted: () => void = () => undefined;
      const insertDone = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      // The fault: the INSERT succeeds, then the answer never comes back, so the segment is never deleted:
      // what a kill -9 at that point leaves. That gateway is abandoned, as a killed process would be.
      const dying = await startTestGateway('wal_crash', {
        store,
        writer: { logDir: dir, maxBatchDelayMs: 60_000 },
        sink: (real) => ({
          insert: async (table, chunks, token) => {
            await real.insert(table, chunks, token);
            inserted();
            return new Promise(() => undefined);
          },
        }),
      });
      expect((await post(`${dying.httpUrl}/v1/traces`, spanBody('crash-tenant', 'replayed', 250), protobufHeaders(keys.admin))).status).to.equal(200);
      void dying.flush();
      await insertDone;
      const db = store.database;
      expect(await rows(store, `SELECT toString(count()) AS n FROM ${db}.spans WHERE tenant_id = 'crash-tenant'`)).to.deep.equal([{ n: '250' }]);

      const restarted = await startTestGateway('wal_crash', { store, writer: { logDir: dir } });
      gateways.push(restarted);
      await restarted.flush();
      expect(await rows(store, `SELECT toString(count()) AS n FROM ${db}.spans WHERE tenant_id = 'crash-tenant'`)).to.deep.equal([{ n: '250' }]);
      expect(await rows(store, `SELECT toString(sum(spans)) AS n FROM ${db}.usage_daily WHERE tenant_id = 'crash-tenant'`)).to.deep.equal([{ n: '250' }]);
      expect(await rows(store, `SELECT toString(count()) AS n FROM ${db}.tenants WHERE tenant_id = 'crash-tenant'`)).to.deep.equal([{ n: '1' }]);
    });
  });

  describe("a crash after one split half's INSERT", () => {
    let store: Store;
    let dir: string;
    const gateways: TestGateway[] = [];
    before(async () => {
      store = await migratedStore('wal_split_crash');
      dir = mkdtempSync(join(tmpdir(), 'tenantry-wal-split-'));
    });
    after(async () => {
      for (const gw of gateways) await gw.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('stores every acknowledged row exactly once when the restarted process replays the segment', async () => {
      let firstHalfStored: () => void = () => undefined;
      const halfDone = new Promise<void>((resolve) => {
        firstHalfStored = resolve;
      });
      // The fault, at the sink port: ClickHouse refuses the whole block for its rows (so the block is split by request),
      // stores the first half, and the process dies before it answers: what a kill -9 at that point leaves.
      const dying = await startTestGateway('wal_split_crash', {
        store,
        writer: { logDir: dir, maxBatchDelayMs: 60_000 },
        sink: (real) => ({
          insert: async (table, chunks, token) => {
            if (!/-[ab]$/.test(token)) return fail({ kind: 'invalid_query', message: 'Cannot parse input' });
            await real.insert(table, chunks, token);
            firstHalfStored();
            return new Promise(() => undefined);
          },
        }),
      });
      const requests = 4;
      for (let i = 0; i < requests; i++) {
        expect((await post(`${dying.httpUrl}/v1/traces`, spanBody('split-tenant', `r${i}`, 25), protobufHeaders(keys.admin))).status).to.equal(200);
      }
      void dying.flush();
      await halfDone;
      const db = store.database;
      const count = `SELECT toString(count()) AS n FROM ${db}.spans WHERE tenant_id = 'split-tenant'`;
      expect(await rows(store, count), 'the first half is stored before the crash').to.deep.equal([{ n: String((requests / 2) * 25) }]);

      const restarted = await startTestGateway('wal_split_crash', { store, writer: { logDir: dir } });
      gateways.push(restarted);
      await restarted.flush();
      expect(await rows(store, count)).to.deep.equal([{ n: String(requests * 25) }]);
      const perSpan = await rows(
        store,
        `SELECT span_name, toString(count()) AS n FROM ${db}.spans WHERE tenant_id = 'split-tenant' GROUP BY span_name HAVING count() > 1`,
      );
      expect(perSpan, 'no span stored twice').to.deep.equal([]);
      expect(await rows(store, `SELECT toString(sum(spans)) AS n FROM ${db}.usage_daily WHERE tenant_id = 'split-tenant'`)).to.deep.equal([
        { n: String(requests * 25) },
      ]);
    });
  });

  describe('parts per second', () => {
    let gw: TestGateway;
    before(async () => {
      // The production cut policy: a block per table per second at most, unless 100k rows come first.
      gw = await startTestGateway('wal_parts', { writer: { maxBatchDelayMs: 1000, maxBatchRows: 100_000 } });
      await gw.store.client.command({ query: `SYSTEM STOP MERGES ${gw.store.database}.spans` });
    });
    after(async () => {
      await gw.close();
    });

    it('stay at about one per table per second under 8 closed-loop clients, whatever their number', async () => {
      const started = Date.now();
      const deadline = started + 3000;
      let acknowledged = 0;
      await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          for (let i = 0; Date.now() < deadline && i < 10_000; i++) {
            const res = await post(`${gw.httpUrl}/v1/traces`, spanBody('parts', `c${client}-r${i}`, 20), protobufHeaders(keys.admin));
            expect(res.status).to.equal(200);
            acknowledged += 20;
          }
        }),
      );
      await gw.flush();
      const seconds = (Date.now() - started) / 1000;
      const [parts] = await select<{ parts: string; rows: string }>(
        gw.store,
        `SELECT toString(count()) AS parts, toString(sum(rows)) AS rows FROM system.parts WHERE database = {db:String} AND table = 'spans' AND active`,
        { db: gw.store.database },
      );
      expect(Number(parts?.rows)).to.equal(acknowledged);
      // One part per elapsed second, plus the last partial second's block.
      expect(Number(parts?.parts)).to.be.at.most(Math.ceil(seconds) + 1);
      expect(Number(parts?.parts) / seconds).to.be.at.most(2);
    });
  });

  describe('a full disk under the log', () => {
    let gw: TestGateway | undefined;
    let mountPoint: string | undefined;
    let release: () => void = () => undefined;
    before(function () {
      if (process.getuid?.() !== 0) {
        console.log('      (skipped: mounting a small tmpfs for the log needs root)');
        this.skip();
      }
    });
    after(async () => {
      release();
      await gw?.close();
      if (mountPoint !== undefined) {
        execFileSync('umount', [mountPoint]);
        rmSync(mountPoint, { recursive: true, force: true });
      }
    });

    it('answers 503 without acknowledging, turns unready, and recovers by itself with every acknowledged row stored once', async () => {
      mountPoint = mkdtempSync(join(tmpdir(), 'tenantry-wal-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint]);
      const logDir = join(mountPoint, 'wal');
      mkdirSync(logDir);
      gw = await startTestGateway('wal_full', {
        writer: { logDir, maxBatchDelayMs: 0 },
        sink: (real) => {
          const g = downUntilReleased(real);
          release = g.release;
          return g.sink;
        },
      });
      const acknowledged: string[] = [];
      let refused: { status: number; body: Buffer } | undefined;
      for (let i = 0; i < 500 && refused === undefined; i++) {
        const name = `fill-${i}`;
        const res = await post(`${gw.httpUrl}/v1/traces`, spanBody('full', name, 10), protobufHeaders(keys.admin));
        if (res.status === 200) acknowledged.push(name);
        else refused = res;
      }
      expect(refused?.status).to.equal(503);
      const status = statusOf(refused?.body ?? Buffer.alloc(0));
      expect(status.message).to.equal("storage unavailable: the write-ahead log's disk is full");
      expect(status.message).to.not.contain(mountPoint);
      expect(gw.readiness.isReady()).to.equal(false);
      expect(gw.readiness.reasons()).to.include('waiting for write-ahead log disk');
      expect(acknowledged.length).to.be.greaterThan(0);

      // ClickHouse returns and takes the log's blocks, which frees the disk; the probe notices without any new request.
      release();
      await gw.flush();
      await gw.readiness.whenReady();
      const stored = await select<{ span_name: string }>(gw.store, `SELECT DISTINCT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'full'`);
      const names = new Set(stored.map((r) => r.span_name.replace(/-\d+$/, '')));
      expect([...names].sort()).to.deep.equal([...acknowledged].sort());
      const [count] = await select<{ n: string }>(gw.store, `SELECT toString(count()) AS n FROM ${gw.store.database}.spans WHERE tenant_id = 'full'`);
      expect(count?.n).to.equal(String(acknowledged.length * 10));
      expect((await post(`${gw.httpUrl}/v1/traces`, spanBody('full', 'after'), protobufHeaders(keys.admin))).status).to.equal(200);
    });
  });
});

async function rows(store: Store, sql: string): Promise<unknown[]> {
  return (await store.client.query({ query: sql, format: 'JSONEachRow' })).json();
}
