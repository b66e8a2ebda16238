// A retried block on a cluster, as far as embedded ClickHouse can show it
// (docs/schema.md, "Sharding"). chDB runs no server, so a Distributed table
// cannot reach a shard here; what a foreground Distributed INSERT does is
// replayed by hand: the rows split by the sharding key modulo the shards (as
// its selector does), each shard's part inserted into that shard's table with
// the INSERT's insert_deduplication_token (it passes its settings to each
// shard). Each "shard" is a copy of the real signal table, with its
// partitions and deduplication window. The first try stores shard 0's part
// and fails on shard 1; the write-ahead log then retries the whole block
// under the same token (about a quarter of the rows is lost with rand()). Also: every statement migration 9 and the
// schema_migrations conversion run on a cluster parses.
import { expect } from 'chai';
import { deterministicShardingStatements } from '../../../src/clickhouse/schema/cluster-schema.ts';
import { migrationsTablePlan } from '../../../src/clickhouse/schema/migrations-table.ts';
import { shardingKeys } from '../../../src/clickhouse/schema/tables.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { logRow, metricRow, secondsNs, spanRow } from '../api/support/telemetry-rows.ts';
import { migratedStore, rows } from '../../support/embedded-store.ts';

type Signal = 'logs' | 'spans' | 'metrics';
const start = secondsNs(Date.UTC(2026, 10, 23, 22, 0, 0) / 1000);
const n = 400;

/** n rows of a signal over two UTC days (two partitions), each with a unique id column. */
function block(signal: Signal): { id: string; values: Array<Record<string, unknown>> } {
  const at = (i: number): bigint => start + BigInt(i) * 30_000_000_000n;
  const hex = (i: number, width: number): string => i.toString(16).padStart(width, '0');
  const values = Array.from({ length: n }, (_, i) => {
    if (signal === 'logs') return logRow({ tenant: 't1', ns: at(i), logId: `log-${i}`, traceId: i % 3 === 0 ? '' : hex(i % 50, 32), body: `line ${i}` });
    if (signal === 'spans') return spanRow({ tenant: 't1', ns: at(i), traceId: hex(i % 60, 32), spanId: hex(i, 16) });
    return metricRow({
      tenant: 't1',
      name: `m${i % 7}`,
      ns: at(i % 40),
      attrs: { series: String(i % 10) },
      resource: { 'service.instance.id': String(Math.floor(i / 70)) },
      value: i,
    });
  });
  return { id: { logs: 'log_id', spans: 'span_id', metrics: 'toString(value)' }[signal], values };
}

/** Which shard of `shards` each row goes to, by `key` evaluated by ClickHouse on the stored rows, keyed by the row's id. */
async function shardOf(store: Store, source: string, id: string, key: string, shards: number): Promise<Map<string, number>> {
  const split = await rows<{ id: string; shard: number }>(store, `SELECT ${id} AS id, toUInt32((${key}) % ${shards}) AS shard FROM ${source}`);
  return new Map(split.map((r) => [r.id, r.shard]));
}

/** One shard's part of the block, as the Distributed table would send it: the block's rows of that shard in order, the INSERT's token. */
async function insertPart(store: Store, table: string, values: ReadonlyArray<Record<string, unknown>>, token: string): Promise<void> {
  if (values.length === 0) return;
  // The rows are the INSERT's body, as the gateway's block INSERT carries them; chDB keeps client-side settings for the session, so the token is in the SQL.
  await store.client.command({
    query: `INSERT INTO ${table} SETTINGS insert_deduplication_token = '${token}' FORMAT JSONEachRow\n${values.map((v) => JSON.stringify(v)).join('\n')}`,
  });
}

/** The block tried twice under one token: shard 0 stores its part, shard 1 fails; then the retry sends both parts again. Returns the rows stored and the distinct ids. */
async function failThenRetry(store: Store, signal: Signal, key: string, name: string): Promise<{ stored: number; distinct: number }> {
  const db = store.database;
  const { id, values } = block(signal);
  const source = `${db}.${signal}_${name}_src`;
  const shard = (s: number): string => `${db}.${signal}_${name}_s${s}`;
  for (const table of [source, shard(0), shard(1)]) await store.client.command({ query: `CREATE TABLE ${table} AS ${db}.${signal}` });
  await store.client.insert({ table: source, values, format: 'JSONEachRow' });
  const field = { logs: 'log_id', spans: 'span_id', metrics: 'value' }[signal];
  const partOf = (split: Map<string, number>, s: number): Array<Record<string, unknown>> => values.filter((v) => split.get(String(v[field])) === s);

  const first = await shardOf(store, source, id, key, 2);
  await insertPart(store, shard(0), partOf(first, 0), `${name}-segment-1`);
  // Shard 1 failed: the INSERT fails, the write-ahead log keeps the block and retries it with the same token.
  const retry = await shardOf(store, source, id, key, 2);
  for (const s of [0, 1]) await insertPart(store, shard(s), partOf(retry, s), `${name}-segment-1`);

  const [counted] = await rows<{ stored: string; distinct: string }>(
    store,
    `SELECT count() AS stored, uniqExact(id) AS distinct FROM (SELECT ${id} AS id FROM ${shard(0)} UNION ALL SELECT ${id} AS id FROM ${shard(1)})`,
  );
  return { stored: Number(counted?.stored), distinct: Number(counted?.distinct) };
}

describe('a block retried under one deduplication token on a cluster (chDB, shards replayed by hand)', function () {
  this.timeout(120_000);
  let store: Store;
  before(async () => {
    store = await migratedStore('sharding_retry');
  });
  after(async () => {
    await store.close();
  });

  it('with rand() sharding the retry drops rows a shard already holds a block of that token for, and stores others twice', async () => {
    const result = await failThenRetry(store, 'logs', 'rand()', 'random');
    expect(result.distinct).to.be.lessThan(n);
    expect(result.stored).to.be.lessThan(n + n);
  });

  for (const signal of ['logs', 'spans', 'metrics'] as const) {
    it(`with ${signal}' key ${shardingKeys[signal]} every row is stored exactly once`, async () => {
      expect(await failThenRetry(store, signal, shardingKeys[signal], 'keyed')).to.deep.equal({ stored: n, distinct: n });
    });
  }

  it('the keys spread rows evenly over 4 shards (each between 15 and 35 % of 4000 rows)', async () => {
    const checks = [
      {
        key: shardingKeys.logs,
        from: `SELECT toString(number) AS log_id, toDateTime64('2026-11-24 00:00:00', 9) + toIntervalMillisecond(number) AS timestamp FROM numbers(4000)`,
      },
      { key: shardingKeys.spans, from: 'SELECT lower(hex(reinterpretAsFixedString(cityHash64(number, 1)))) AS trace_id FROM numbers(4000)' },
      {
        key: shardingKeys.metrics,
        from:
          `SELECT concat('m', toString(number % 20)) AS metric_name, map('service.instance.id', toString(number % 5)) AS resource_attributes, ` +
          `map('series', toString(number % 10)) AS attributes, toDateTime64('2026-11-24 00:00:00', 9) + toIntervalSecond(intDiv(number, 200) * 15) AS timestamp FROM numbers(4000)`,
      },
    ];
    for (const { key, from } of checks) {
      const spread = await rows<{ shard: number; n: string }>(
        store,
        `SELECT toUInt32((${key}) % 4) AS shard, count() AS n FROM (${from}) GROUP BY shard ORDER BY shard`,
      );
      expect(spread, key).to.have.length(4);
      for (const s of spread) expect(Number(s.n), `${key} shard ${s.shard}`).to.be.within(600, 1400);
    }
  });

  it('every cluster statement of migration 9 and of the schema_migrations conversion parses', async () => {
    const cluster = { database: 'obs', cluster: 'tenantry' };
    const old = ['s0-0', 's1-0'].flatMap((host) => [
      {
        host,
        name: 'schema_migrations',
        engine: 'Distributed',
        create: "CREATE TABLE obs.schema_migrations (`version` UInt32) ENGINE = Distributed('tenantry', 'obs', 'schema_migrations_local', version)",
      },
      {
        host,
        name: 'schema_migrations_local',
        engine: 'ReplicatedReplacingMergeTree',
        create:
          "CREATE TABLE obs.schema_migrations_local (`version` UInt32, `applied_at` DateTime64(3)) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/obs/schema_migrations_local', '{replica}', applied_at) ORDER BY version",
      },
    ]);
    const plan = migrationsTablePlan(cluster, ['s0-0', 's1-0', 's2-0'], old);
    if (plan.kind !== 'convert') throw new Error(plan.kind);
    const statements = [...deterministicShardingStatements(cluster), ...plan.statements];
    expect(statements).to.have.length(8 + 7);
    for (const q of statements) {
      const [formatted] = await rows<{ f: string }>(store, 'SELECT formatQuerySingleLine({q:String}) AS f', { q });
      expect(formatted?.f, q)
        .to.be.a('string')
        .and.to.match(/^(SYSTEM|CREATE|INSERT|EXCHANGE|DROP) /);
    }
  });
});
