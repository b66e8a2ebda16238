// The drain of a departed gateway replica's write-ahead log
// (gateway/drain/wal-drain.ts, docs/adr/0007-gateway-wal-volumes.md), in
// process on embedded ClickHouse: a gateway stopped while ClickHouse was down
// leaves its acknowledged rows as segments; the drain inserts them, each
// exactly once, even when an earlier drain attempt reached ClickHouse and
// still failed, and leaves the directory empty.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { countSegments, drainLogDirectory } from '../../../gateway/drain/wal-drain.ts';
import { clickHouseRowSink } from '../../../gateway/writer/clickhouse-row-sink.ts';
import type { RowSink } from '../../../gateway/writer/row-sink.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import type { WriterConfig } from '../../../src/config/config.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { fail } from '../../../src/result.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { keys, startTestGateway } from './support/gateway-harness.ts';
import { post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

const tenant = 'drained-tenant';
const spanBody = (name: string, spans: number): Buffer =>
  tracesProtobuf(
    tracesJson(
      { 'tenant.id': tenant },
      Array.from({ length: spans }, (_, i) => ({ name: `${name}-${i}` })),
    ),
  );

async function count(store: Store, query: string): Promise<string> {
  const rs = await store.client.query({ query, format: 'JSONEachRow', query_params: { tenant } });
  return (await rs.json<{ n: string }>())[0]?.n ?? '';
}

describe("gateway: draining a departed replica's write-ahead log", function () {
  // Two writer stops while ClickHouse fails each wait out logged-writer.ts' 30 s stop timeout.
  this.timeout(150_000);
  let store: Store;
  let dir: string;
  before(async () => {
    store = await migratedStore('wal_drain');
    dir = mkdtempSync(join(tmpdir(), 'tenantry-wal-drain-'));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('inserts the segments of a gateway that could not insert exactly once, even after a failed attempt that reached ClickHouse', async () => {
    const down: RowSink = { insert: () => Promise.resolve(fail({ kind: 'unavailable', message: 'connection refused' })) };
    const writer: Partial<WriterConfig> = { logDir: dir, maxBatchRows: 100 };
    const gateway = await startTestGateway('wal_drain', { store, writer, sink: () => down });
    for (const name of ['a', 'b', 'c']) {
      expect((await post(`${gateway.httpUrl}/v1/traces`, spanBody(name, 150), protobufHeaders(keys.admin))).status).to.equal(200);
    }
    // SIGTERM's stop with ClickHouse down: it gives up after its timeout and leaves the log on the volume.
    await gateway.stop();
    const left = await countSegments(dir);
    expect(left, 'acknowledged rows are left as segments').to.be.greaterThan(1);
    const db = store.database;
    const spans = `SELECT toString(count()) AS n FROM ${db}.spans WHERE tenant_id = {tenant:String}`;
    const usage = `SELECT toString(sum(spans)) AS n FROM ${db}.usage_daily WHERE tenant_id = {tenant:String}`;
    expect(await count(store, spans)).to.equal('0');

    const config: WriterConfig = { maxBatchRows: 100, maxBatchBytes: 16 * 1024 * 1024, maxBatchDelayMs: 5, maxLogBytes: 64 * 1024 * 1024, logDir: dir };
    // A first drain whose INSERTs reach ClickHouse but whose answers are lost: it fails, and the segments stay.
    const real = clickHouseRowSink(store);
    const lostAnswers: RowSink = {
      insert: async (table, chunks, token) => {
        await real.insert(table, chunks, token);
        return fail({ kind: 'unavailable', message: 'connection reset' });
      },
    };
    const failed = await drainLogDirectory(lostAnswers, config, silentLogger, 1_000);
    expect(failed.ok).to.equal(false);
    expect(failed.ok ? 0 : failed.error.segmentsLeft).to.equal(left);
    // Two segments per table are inserted at once: some, not necessarily all, reached ClickHouse before the attempt gave up.
    expect(Number(await count(store, spans)), 'the INSERTs whose answers were lost did reach ClickHouse').to.be.greaterThan(0);

    const drained = await drainLogDirectory(real, config, silentLogger, 30_000);
    expect(drained).to.deep.equal({ ok: true, value: { segmentsFound: left, rowsInserted: 450, rowsDeadLettered: 0 } });
    expect(await countSegments(dir)).to.equal(0);
    expect(await count(store, spans)).to.equal('450');
    expect(await count(store, usage)).to.equal('450');
  });

  it('an empty directory (a replica that drained on SIGTERM) drains at once', async () => {
    const config: WriterConfig = { maxBatchRows: 100, maxBatchBytes: 1024 * 1024, maxBatchDelayMs: 5, maxLogBytes: 1024 * 1024, logDir: dir };
    const started = performance.now();
    expect(await drainLogDirectory(clickHouseRowSink(store), config, silentLogger, 30_000)).to.deep.equal({
      ok: true,
      value: { segmentsFound: 0, rowsInserted: 0, rowsDeadLettered: 0 },
    });
    expect(performance.now() - started).to.be.below(5_000);
  });
});
