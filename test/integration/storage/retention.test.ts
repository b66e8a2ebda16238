// Retention per tenant and signal on embedded ClickHouse (migration 5,
// docs/schema.md "Retention"): the partition key and TTL, the view that
// resolves each tenant's days, the INSERT that stamps them on rows, whole
// parts dropped on expiry, and the migration keeping the rows it finds.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { insertRowBinary, rowBinaryTarget } from '../../../src/clickhouse/row-binary-insert.ts';
import { migrate } from '../../../src/clickhouse/schema/migrator.ts';
import { migrations } from '../../../src/clickhouse/schema/migrations.ts';
import { applyRetentionTtl, retainedTtl } from '../../../src/clickhouse/schema/retention-ttl.ts';
import { logsTable } from '../../../src/clickhouse/schema/tables.ts';
import { createSettingsStore } from '../../../src/tenant/settings/settings-store.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { resolveEffective } from '../../../src/tenant/settings/tenant-settings.ts';
import type { SourcedValues } from '../../../src/tenant/settings/tenant-settings.ts';
import { RowWriter } from '../../../gateway/rowbinary/row-writer.ts';
import { databaseStore, defaultRetention, migratedStore, rows } from '../../support/embedded-store.ts';

const dayMs = 86_400_000;
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Settings rows as the settings store writes them (contract of issue 13); `at` orders writes of one key. */
async function setSettings(
  store: Store,
  values: ReadonlyArray<{ source: string; tenant: string; field: string; value: number | null; at: number }>,
): Promise<void> {
  await store.client.insert({
    table: `${store.database}.tenant_settings`,
    values: values.map((v) => ({
      source: v.source,
      tenant_id: v.tenant,
      field: v.field,
      value: v.value,
      updated_at: (BigInt(1_800_000_000_000 + v.at) * 1_000_000n).toString(),
    })),
    format: 'JSONEachRow',
  });
}

const logTarget = rowBinaryTarget(logsTable(defaultRetention), ['tenant_id', 'timestamp', 'log_id']);

/** Logs rows (tenant, time in ms, id) as the gateway's RowBinary, inserted the gateway's way. */
async function insertLogs(store: Store, logs: ReadonlyArray<{ tenant: string; ms: number; id: string }>): Promise<void> {
  const w = new RowWriter();
  for (const log of logs) {
    const ns = BigInt(log.ms) * 1_000_000n;
    w.text(log.tenant);
    w.u64Parts(Number(ns & 0xffffffffn), Number(ns >> 32n));
    w.text(log.id);
  }
  await insertRowBinary(store, logTarget, [w.rows()]);
}

describe('retention per tenant and signal (migration 5) on embedded ClickHouse', function () {
  this.timeout(60_000);

  describe('tables', () => {
    let store: Store;
    before(async () => {
      store = await migratedStore('retention');
    });
    after(async () => {
      await store.close();
    });

    it('partition every signal table by (retention_days, day) and expire rows by their own retention, whole parts only', async () => {
      const tables = await rows<{ name: string; partition_key: string; engine_full: string }>(
        store,
        "SELECT name, partition_key, engine_full FROM system.tables WHERE database = {db:String} AND name IN ('logs', 'spans', 'metrics') ORDER BY name",
        { db: store.database },
      );
      expect(tables.map((t) => [t.name, t.partition_key])).to.deep.equal([
        ['logs', '(retention_days, toDate(timestamp))'],
        ['metrics', '(retention_days, toDate(timestamp))'],
        ['spans', '(retention_days, toDate(timestamp))'],
      ]);
      for (const t of tables) {
        // Migration 5's TTL `toDateTime(timestamp) + toIntervalDay(retention_days)`, made by migration 7 the greater of that and the tenant's current days.
        expect(t.engine_full, t.name).to.contain(`TTL ${retainedTtl([], t.name === 'metrics' ? 90 : 30)} SETTINGS`);
        expect(t.engine_full, t.name).to.contain('ttl_only_drop_parts = 1');
      }
      const columns = await rows<{ table: string; type: string; default_expression: string }>(
        store,
        "SELECT table, type, default_expression FROM system.columns WHERE database = {db:String} AND name = 'retention_days' ORDER BY table",
        { db: store.database },
      );
      expect(columns).to.deep.equal([
        { table: 'logs', type: 'UInt16', default_expression: '30' },
        { table: 'metrics', type: 'UInt16', default_expression: '90' },
        { table: 'spans', type: 'UInt16', default_expression: '30' },
      ]);
    });

    it('prune partitions of other days and retentions from a time-bounded query (EXPLAIN indexes = 1)', async () => {
      const now = Date.now();
      await insertLogs(store, [
        { tenant: 'prune', ms: now - 2 * dayMs, id: 'old' },
        { tenant: 'prune', ms: now, id: 'new' },
      ]);
      const plan = await rows<{ explain: string }>(
        store,
        `EXPLAIN indexes = 1 SELECT log_id FROM ${store.database}.logs WHERE tenant_id = 'prune' AND timestamp >= fromUnixTimestamp64Milli({from:Int64})`,
        { from: now - 60_000 },
      );
      const text = plan.map((p) => p.explain).join('\n');
      // The partition key's columns (retention_days, timestamp) prune whole parts before the primary key is read.
      const partition = /Min-Max[\s\S]*?Parts: (\d+)\/(\d+)/.exec(text);
      if (partition === null) throw new Error(`no partition pruning step in plan:\n${text}`);
      expect(Number(partition[1]), text).to.be.lessThan(Number(partition[2]));
    });

    it("resolve each tenant's days in tenant_retention as the settings module does (tenant, api, stack, default; newest write; NULL unsets)", async () => {
      await setSettings(store, [
        { source: 'tenant', tenant: 'a', field: 'retention.logsDays', value: 3, at: 1 },
        { source: 'api', tenant: 'a', field: 'retention.logsDays', value: 5, at: 1 },
        { source: 'api', tenant: 'a', field: 'retention.tracesDays', value: 11, at: 1 },
        { source: 'api', tenant: 'b', field: 'retention.metricsDays', value: 200, at: 1 },
        { source: 'api', tenant: 'b', field: 'retention.metricsDays', value: null, at: 2 },
        { source: 'api', tenant: 'b', field: 'retention.logsDays', value: 8, at: 1 },
        { source: 'api', tenant: 'b', field: 'retention.logsDays', value: 9, at: 3 },
        { source: 'stack', tenant: '', field: 'retention.logsDays', value: 45, at: 1 },
        { source: 'stack', tenant: '', field: 'retention.tracesDays', value: 60, at: 1 },
        { source: 'api', tenant: 'c', field: 'limits.maxQueryDays', value: 7, at: 1 },
      ]);
      const sources: Record<string, SourcedValues> = {
        a: {
          tenant: { retention: { logsDays: 3 } },
          api: { retention: { logsDays: 5, tracesDays: 11 } },
          stack: { retention: { logsDays: 45, tracesDays: 60 } },
        },
        b: { api: { retention: { logsDays: 9 } }, stack: { retention: { logsDays: 45, tracesDays: 60 } } },
        '': { stack: { retention: { logsDays: 45, tracesDays: 60 } } },
      };
      const view = await rows<{ tenant_id: string; logs_days: number; traces_days: number; metrics_days: number }>(
        store,
        `SELECT tenant_id, logs_days, traces_days, metrics_days FROM ${store.database}.tenant_retention ORDER BY tenant_id`,
      );
      expect(view.map((v) => v.tenant_id)).to.deep.equal(['', 'a', 'b']);
      for (const v of view) {
        const expected = resolveEffective(sources[v.tenant_id] ?? {}, { limits: {} as never, retention: defaultRetention }).retention;
        expect({ logsDays: v.logs_days, tracesDays: v.traces_days, metricsDays: v.metrics_days }, `tenant '${v.tenant_id}'`).to.deep.equal(expected);
      }
    });

    it("stamp each row at INSERT with its tenant's current days, and drop a short-retention tenant's parts whole while a long one's rows of the same day stay", async () => {
      await setSettings(store, [
        { source: 'api', tenant: 'short', field: 'retention.logsDays', value: 2, at: 1 },
        { source: 'api', tenant: 'long', field: 'retention.logsDays', value: 400, at: 1 },
      ]);
      // What the settings writer does after a retention write (these rows were written around it).
      await applyRetentionTtl(store, store);
      const threeDaysAgo = Date.now() - 3 * dayMs;
      const yesterday = Date.now() - dayMs;
      // Rows already expired would be dropped by the first merge after their INSERT: hold TTL merges to see them stored first.
      await store.client.command({ query: `SYSTEM STOP TTL MERGES ${store.database}.logs` });
      await insertLogs(store, [
        { tenant: 'short', ms: threeDaysAgo, id: 's-old' },
        { tenant: 'long', ms: threeDaysAgo, id: 'l-old' },
        { tenant: 'short', ms: yesterday, id: 's-new' },
        { tenant: 'other', ms: threeDaysAgo, id: 'o-old' },
      ]);
      // The INSERT finished: every row carries its days, in its own partition.
      const stamped = await rows<{ log_id: string; retention_days: number; partition: string }>(
        store,
        `SELECT log_id, retention_days, _partition_id AS partition FROM ${store.database}.logs WHERE tenant_id IN ('short', 'long', 'other') ORDER BY log_id`,
      );
      const old = utcDay(threeDaysAgo).replaceAll('-', '');
      expect(stamped).to.deep.equal([
        { log_id: 'l-old', retention_days: 400, partition: `400-${old}` },
        { log_id: 'o-old', retention_days: 45, partition: `45-${old}` },
        { log_id: 's-new', retention_days: 2, partition: `2-${utcDay(yesterday).replaceAll('-', '')}` },
        { log_id: 's-old', retention_days: 2, partition: `2-${old}` },
      ]);
      // A TTL merge (OPTIMIZE runs it now instead of at the next background merge) drops the expired part.
      await store.client.command({ query: `SYSTEM START TTL MERGES ${store.database}.logs` });
      await store.client.command({ query: `OPTIMIZE TABLE ${store.database}.logs PARTITION ID '2-${old}' FINAL` });
      const left = await rows<{ log_id: string }>(
        store,
        `SELECT log_id FROM ${store.database}.logs WHERE tenant_id IN ('short', 'long', 'other') ORDER BY log_id`,
      );
      expect(left.map((l) => l.log_id)).to.deep.equal(['l-old', 'o-old', 's-new']);
      const parts = await rows<{ partition_id: string; rows: string }>(
        store,
        `SELECT partition_id, sum(rows) AS rows FROM system.parts WHERE database = {db:String} AND table = 'logs' AND active AND partition_id = {p:String} GROUP BY partition_id`,
        { db: store.database, p: `2-${old}` },
      );
      expect(parts.map((p) => Number(p.rows))).to.satisfy((n: number[]) => n.length === 0 || n.every((r) => r === 0));
      // The TTL's recalculations (migration 7) are the only mutations: they rewrite no rows.
      const mutations = await rows<{ n: string }>(
        store,
        "SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND command != '(MATERIALIZE TTL)'",
        { db: store.database },
      );
      expect(Number(mutations[0]?.n), 'no row-by-row rewrite').to.equal(0);
    });

    it('give a raised retention to rows inserted after the change only: stored rows keep the days they were written with', async () => {
      await insertLogs(store, [{ tenant: 'raise', ms: Date.now(), id: 'r-before' }]);
      await setSettings(store, [{ source: 'api', tenant: 'raise', field: 'retention.logsDays', value: 365, at: 1 }]);
      await insertLogs(store, [{ tenant: 'raise', ms: Date.now(), id: 'r-after' }]);
      const stamped = await rows<{ log_id: string; retention_days: number }>(
        store,
        `SELECT log_id, retention_days FROM ${store.database}.logs WHERE tenant_id = 'raise' ORDER BY log_id`,
      );
      expect(stamped).to.deep.equal([
        { log_id: 'r-after', retention_days: 365 },
        { log_id: 'r-before', retention_days: 45 },
      ]);
    });
  });

  describe('raising retention keeps stored rows (migration 7)', () => {
    let store: Store;
    before(async () => {
      store = await migratedStore('retention_raise');
    });
    after(async () => {
      await store.close();
    });

    const twoDaysAgo = (): number => Date.now() - 2 * dayMs;
    const partsOf = (tenant: string): Promise<Array<{ name: string; ttl_max: string; rows: string }>> =>
      rows(
        store,
        `SELECT _part AS name, max(retention_days) AS r, count() AS rows, any(p.delete_ttl_info_max) AS ttl_max FROM ${store.database}.logs AS l
       JOIN (SELECT name, delete_ttl_info_max FROM system.parts WHERE database = {db:String} AND table = 'logs' AND active) AS p ON p.name = l._part
       WHERE tenant_id = {tenant:String} GROUP BY _part`,
        { db: store.database, tenant },
      );
    const logIds = async (tenant: string): Promise<string[]> =>
      (await rows<{ log_id: string }>(store, `SELECT log_id FROM ${store.database}.logs WHERE tenant_id = {tenant:String} ORDER BY log_id`, { tenant })).map(
        (r) => r.log_id,
      );
    /** Inode of each column data file of an active part of logs (a rewrite makes new files; a hard link keeps them). */
    const columnFiles = async (part: string): Promise<Map<string, number>> => {
      const [row] = await rows<{ path: string }>(
        store,
        "SELECT path FROM system.parts WHERE database = {db:String} AND table = 'logs' AND name = {part:String}",
        { db: store.database, part },
      );
      const dir = row?.path ?? '';
      const names = (await readdir(dir)).filter((f) => f.endsWith('.bin'));
      return new Map(await Promise.all(names.map(async (f) => [f, (await stat(join(dir, f))).ino] as const)));
    };
    /** A TTL merge of every part now (OPTIMIZE … FINAL instead of waiting for the background merge). */
    const ttlMerge = async (): Promise<void> => {
      await store.client.command({ query: `SYSTEM START TTL MERGES ${store.database}.logs` });
      await store.client.command({ query: `OPTIMIZE TABLE ${store.database}.logs FINAL` });
    };

    it('sets materialize_ttl_recalculate_only on every signal table and the TTL to the greater of stored and current days', async () => {
      const tables = await rows<{ name: string; engine_full: string }>(
        store,
        "SELECT name, engine_full FROM system.tables WHERE database = {db:String} AND name IN ('logs', 'spans', 'metrics') ORDER BY name",
        { db: store.database },
      );
      expect(tables).to.have.length(3);
      for (const t of tables) {
        expect(t.engine_full, t.name).to.contain('materialize_ttl_recalculate_only = 1');
        expect(t.engine_full, t.name).to.contain(`TTL ${retainedTtl([], t.name === 'metrics' ? 90 : 30)} SETTINGS`);
      }
    });

    it("keeps a 2-day-old part written under 1 day after the tenant is raised to 100 days, through a TTL merge; another 1-day tenant's part goes", async () => {
      const settings = createSettingsStore(store, store);
      await settings.write('api', 'grow', { retention: { logsDays: 1 } });
      await settings.write('api', 'stay', { retention: { logsDays: 1 } });
      await store.client.command({ query: `SYSTEM STOP TTL MERGES ${store.database}.logs` });
      // Wide parts (one file per column), as every merged part over 10 MiB and 110,000 rows is (migration 10): small test parts would be compact.
      await store.client.command({ query: `ALTER TABLE ${store.database}.logs MODIFY SETTING min_bytes_for_wide_part = 0, min_rows_for_wide_part = 0` });
      const old = twoDaysAgo();
      await insertLogs(store, [
        { tenant: 'grow', ms: old, id: 'g1' },
        { tenant: 'grow', ms: old + 1, id: 'g2' },
      ]);
      await insertLogs(store, [{ tenant: 'stay', ms: old - dayMs, id: 's1' }]);
      expect((await partsOf('grow'))[0]?.ttl_max, 'written to expire a day after its time').to.equal(
        new Date(Math.floor(old / 1000) * 1000 + dayMs).toISOString().slice(0, 19).replace('T', ' '),
      );

      const before = await rows<{ n: string }>(store, 'SELECT count() AS n FROM system.mutations WHERE database = {db:String}', { db: store.database });
      const filesBefore = await columnFiles((await partsOf('grow'))[0]?.name ?? '');
      const written = await settings.write('api', 'grow', { retention: { logsDays: 100 } });
      expect(written.ok).to.equal(true);
      // The write returned after the recalculation finished (mutations_sync = 2): the part now expires 100 days after its rows.
      const grown = await partsOf('grow');
      expect(grown).to.have.length(1);
      expect(Date.parse(`${grown[0]?.ttl_max ?? ''}Z`)).to.be.greaterThan(Date.now() + 90 * dayMs);
      const mutations = await rows<{ command: string; is_done: number }>(
        store,
        'SELECT command, is_done FROM system.mutations WHERE database = {db:String} ORDER BY create_time',
        { db: store.database },
      );
      expect(mutations.slice(Number(before[0]?.n))).to.deep.include({ command: '(MATERIALIZE TTL)', is_done: 1 });
      // Only the columns the TTL reads are written again; every other column file (bodies, attributes, ids: the bulk) is
      // the old part's, hard-linked (same inode). A compact part (under min_bytes_for_wide_part) is one file, written again whole.
      const filesAfter = await columnFiles(grown[0]?.name ?? '');
      const ttlColumn = /^(tenant_id|timestamp|retention_days)[.]/;
      const kept = [...filesAfter].filter(([f]) => !ttlColumn.test(f));
      expect(kept.length).to.be.greaterThan(10);
      for (const [file, inode] of kept) expect(inode, file).to.equal(filesBefore.get(file));

      await ttlMerge();
      expect(await logIds('grow')).to.deep.equal(['g1', 'g2']);
      expect(await logIds('stay'), "a part past its tenant's current retention is still dropped whole").to.deep.equal([]);
    });

    it('lowering keeps stored rows to the schedule they were written with (the API hides them at once); lowering back to their own days drops them', async () => {
      const settings = createSettingsStore(store, store);
      await settings.write('api', 'shrink', { retention: { logsDays: 100 } });
      await store.client.command({ query: `SYSTEM STOP TTL MERGES ${store.database}.logs` });
      await insertLogs(store, [{ tenant: 'shrink', ms: twoDaysAgo(), id: 'k1' }]);
      await settings.write('api', 'shrink', { retention: { logsDays: 1 } });
      await ttlMerge();
      expect(await logIds('shrink'), 'stored with 100 days').to.deep.equal(['k1']);

      // 'grow' goes back to 1 day: its rows were stored with 1, so nothing keeps them any more.
      await store.client.command({ query: `SYSTEM STOP TTL MERGES ${store.database}.logs` });
      await settings.write('api', 'grow', { retention: { logsDays: 1 } });
      await ttlMerge();
      expect(await logIds('grow')).to.deep.equal([]);
    });

    it('changes nothing when the settings did not change the expression (no new mutation), and leaves the retention of other signals alone', async () => {
      const count = async (): Promise<number> =>
        Number((await rows<{ n: string }>(store, 'SELECT count() AS n FROM system.mutations WHERE database = {db:String}', { db: store.database }))[0]?.n);
      const before = await count();
      expect(await applyRetentionTtl(store, store)).to.deep.equal([]);
      expect(await migrate(store, defaultRetention, silentLogger)).to.deep.equal({ ok: true, value: { applied: [], retentionChanged: [] } });
      await createSettingsStore(store, store).write('api', 'stay', { limits: { maxQueryDays: 3 } });
      expect(await count()).to.equal(before);
      const spans = await rows<{ engine_full: string }>(store, "SELECT engine_full FROM system.tables WHERE database = {db:String} AND name = 'spans'", {
        db: store.database,
      });
      expect(spans[0]?.engine_full).to.contain(`TTL ${retainedTtl([], 30)} SETTINGS`);
    });

    it('writes tenant ids that need escaping into the TTL and reads them back unchanged', async () => {
      const odd = "o'dd\\ten ant";
      await createSettingsStore(store, store).write('api', odd, { retention: { logsDays: 77 } });
      const logs = await rows<{ engine_full: string }>(store, "SELECT engine_full FROM system.tables WHERE database = {db:String} AND name = 'logs'", {
        db: store.database,
      });
      const matched = await rows<{ d: number }>(
        store,
        `SELECT toUInt32(dateDiff('day', toDateTime('2026-01-01 00:00:00', 'UTC'), ${(/ TTL (.*?) SETTINGS /.exec(logs[0]?.engine_full ?? '')?.[1] ?? 'x').replace('timestamp', "toDateTime64('2026-01-01 00:00:00', 9, 'UTC')").replaceAll('retention_days', '1').replaceAll('tenant_id', '{t:String}')})) AS d`,
        { t: odd },
      );
      expect(matched[0]?.d).to.equal(77);
    });
  });

  describe('migration 5', () => {
    let store: Store;
    before(async () => {
      store = await databaseStore('retention_migration');
    });
    after(async () => {
      await store.close();
    });

    it('keeps every row of the tables it rebuilds, with the default days, and the usage and discovery views keep counting', async () => {
      expect(
        await migrate(
          store,
          defaultRetention,
          silentLogger,
          migrations.filter((m) => m.version <= 4),
        ),
      ).to.have.property('ok', true);
      const day = utcDay(Date.now() - dayMs);
      await store.client.insert({
        table: `${store.database}.logs`,
        values: [1, 2, 3].map((i) => ({ tenant_id: 'acme', timestamp: `${day} 10:00:0${i}`, log_id: `l${i}`, body: 'b' })),
        format: 'JSONEachRow',
      });
      await store.client.insert({
        table: `${store.database}.spans`,
        values: [1, 2].map((i) => ({ tenant_id: 'acme', timestamp: `${day} 10:00:0${i}`, span_id: `s${i}` })),
        format: 'JSONEachRow',
      });
      await store.client.insert({
        table: `${store.database}.metrics`,
        values: [{ tenant_id: 'globex', metric_name: 'm', metric_type: 'gauge', timestamp: `${day} 10:00:00`, value: 1 }],
        format: 'JSONEachRow',
      });

      const applied = await migrate(store, defaultRetention, silentLogger);
      if (!applied.ok) throw new Error(applied.error.message);
      expect(applied).to.deep.equal({ ok: true, value: { applied: migrations.filter((m) => m.version >= 5).map((m) => m.version), retentionChanged: [] } });
      const counts = await rows<{ t: string; n: string; days: number[] }>(
        store,
        `SELECT * FROM (SELECT 'logs' AS t, count() AS n, groupUniqArray(retention_days) AS days FROM ${store.database}.logs
         UNION ALL SELECT 'spans', count(), groupUniqArray(retention_days) FROM ${store.database}.spans
         UNION ALL SELECT 'metrics', count(), groupUniqArray(retention_days) FROM ${store.database}.metrics) ORDER BY t`,
      );
      expect(counts.map((c) => ({ ...c, n: Number(c.n) }))).to.deep.equal([
        { t: 'logs', n: 3, days: [30] },
        { t: 'metrics', n: 1, days: [90] },
        { t: 'spans', n: 2, days: [30] },
      ]);
      const leftovers = await rows<{ name: string }>(store, "SELECT name FROM system.tables WHERE database = {db:String} AND name LIKE '%\\_v5'", {
        db: store.database,
      });
      expect(leftovers).to.deep.equal([]);

      // The copy did not count as new usage; rows inserted after the migration do, and discover their tenant.
      const usage = async (): Promise<number> =>
        Number((await rows<{ n: string }>(store, `SELECT sum(log_records) AS n FROM ${store.database}.usage_daily`))[0]?.n);
      expect(await usage()).to.equal(3);
      await insertLogs(store, [{ tenant: 'initech', ms: Date.now(), id: 'after' }]);
      expect(await usage()).to.equal(4);
      const tenants = await rows<{ tenant_id: string }>(store, `SELECT tenant_id FROM ${store.database}.tenants GROUP BY tenant_id ORDER BY tenant_id`);
      expect(tenants.map((t) => t.tenant_id)).to.deep.equal(['acme', 'globex', 'initech']);
    });
  });
});
