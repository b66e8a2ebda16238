import { expect } from 'chai';
import { createMaterializedView, createTable, queryTable, storageTable } from '../../../src/clickhouse/schema/ddl.ts';
import { migrations } from '../../../src/clickhouse/schema/migrations.ts';
import { usageDailyTable } from '../../../src/clickhouse/schema/tables.ts';

const single = { database: 'obs', cluster: undefined };
const cluster = { database: 'obs', cluster: 'main' };
const retention = { logsDays: 30, tracesDays: 30, metricsDays: 90 };

describe('schema DDL', () => {
  it('creates one MergeTree table on a single node', () => {
    const [statement, ...rest] = createTable(single, usageDailyTable);
    expect(rest).to.deep.equal([]);
    expect(statement).to.match(/^CREATE TABLE IF NOT EXISTS obs\.usage_daily \(/);
    expect(statement).to.contain('ENGINE = SummingMergeTree((log_records, log_bytes, spans, metric_points))');
    expect(statement).to.not.contain('ON CLUSTER');
  });

  it('creates a Replicated local table and a Distributed front on a cluster', () => {
    const [local, distributed] = createTable(cluster, usageDailyTable);
    expect(local).to.match(/^CREATE TABLE IF NOT EXISTS obs\.usage_daily_local ON CLUSTER main \(/);
    expect(local).to.contain(
      "ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/obs/usage_daily_local', '{replica}', (log_records, log_bytes, spans, metric_points))",
    );
    expect(distributed).to.equal(
      'CREATE TABLE IF NOT EXISTS obs.usage_daily ON CLUSTER main AS obs.usage_daily_local ENGINE = Distributed(main, obs, usage_daily_local, cityHash64(tenant_id))',
    );
    expect(storageTable(cluster, 'logs')).to.equal('obs.logs_local');
    expect(queryTable(cluster, 'logs')).to.equal('obs.logs');
  });

  it('points materialized views at the local tables on a cluster', () => {
    const view = createMaterializedView(cluster, 'logs_usage_mv', 'logs', 'usage_daily', 'SELECT tenant_id FROM {from}');
    expect(view).to.equal(
      'CREATE MATERIALIZED VIEW IF NOT EXISTS obs.logs_usage_mv ON CLUSTER main TO obs.usage_daily_local AS\nSELECT tenant_id FROM obs.logs_local',
    );
  });

  it('puts tenant_id first in every signal and usage sort key, on both layouts', () => {
    for (const target of [single, cluster]) {
      const statements = migrations.flatMap((m) => m.statements({ ...target, retention }));
      // Signal and usage tables; tenant_settings is keyed by source first, gateway_replicas has no tenant.
      const perTenant = statements.filter((s) =>
        /^CREATE TABLE IF NOT EXISTS obs\.(logs|spans|metrics|usage_daily|usage_rejected_daily)(_v5)?(_local)? /.test(s),
      );
      const keys = perTenant.flatMap((s) => /ORDER BY (.+)/.exec(s)?.[1] ?? []);
      expect(keys).to.have.length.greaterThanOrEqual(8);
      for (const key of keys) expect(key).to.match(/^\(?tenant_id\b/);
      // An INSERT runs on one node (through the Distributed fronts); every DDL statement runs on the whole cluster.
      for (const s of statements.filter((x) => !x.startsWith('INSERT '))) expect(/ON CLUSTER main/.test(s), s).to.equal(target.cluster !== undefined);
    }
  });

  it('rebuilds the signal tables for migration 5 on a cluster: locals exchanged, rows copied through the fronts in the foreground, the front given the column', () => {
    const five = migrations.find((m) => m.version === 5);
    if (five === undefined) throw new Error('no migration 5');
    const statements = five.statements({ ...cluster, retention });
    expect(statements[0]).to.match(/^CREATE OR REPLACE VIEW obs\.tenant_retention ON CLUSTER main AS\nWITH/);
    expect(statements[0]).to.contain('FROM obs.tenant_settings ');
    const logs = statements.filter((s) => /\blogs(_v5)?(_local)?\b/.test(s));
    expect(logs.map((s) => s.split(' (')[0]?.split('\n')[0])).to.deep.equal([
      'DROP TABLE IF EXISTS obs.logs_v5 ON CLUSTER main SYNC',
      'DROP TABLE IF EXISTS obs.logs_v5_local ON CLUSTER main SYNC',
      'CREATE TABLE IF NOT EXISTS obs.logs_v5_local ON CLUSTER main',
      'CREATE TABLE IF NOT EXISTS obs.logs_v5 ON CLUSTER main AS obs.logs_v5_local ENGINE = Distributed(main, obs, logs_v5_local, cityHash64(log_id, timestamp))',
      'INSERT INTO obs.logs_v5',
      'EXCHANGE TABLES obs.logs_local AND obs.logs_v5_local ON CLUSTER main',
      'DROP TABLE IF EXISTS obs.logs_v5 ON CLUSTER main SYNC',
      'DROP TABLE IF EXISTS obs.logs_v5_local ON CLUSTER main SYNC',
      'ALTER TABLE obs.logs ON CLUSTER main ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 30 AFTER timestamp',
    ]);
    const create = logs.find((s) => s.startsWith('CREATE TABLE IF NOT EXISTS obs.logs_v5_local')) ?? '';
    expect(create).to.contain("ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/obs/logs_v5_local', '{replica}')");
    expect(create).to.contain('PARTITION BY (retention_days, toDate(timestamp))');
    expect(create).to.contain('TTL toDateTime(timestamp) + toIntervalDay(retention_days)');
    expect(create).to.contain('retention_days UInt16 DEFAULT 30');
    expect(create).to.contain('log_attributes Map(LowCardinality(String), String) CODEC(ZSTD(6))');
    expect(create).to.not.contain('non_replicated_deduplication_window');
    expect(logs.find((s) => s.startsWith('INSERT'))).to.match(
      /^INSERT INTO obs\.logs_v5 \(tenant_id, .*\) SELECT tenant_id, .* FROM obs\.logs SETTINGS distributed_foreground_insert = 1$/,
    );
  });

  it('rebuilds the signal tables for migration 5 on one node with the deduplication window of migration 2', () => {
    const five = migrations.find((m) => m.version === 5);
    const create = five?.statements({ ...single, retention }).find((s) => s.startsWith('CREATE TABLE IF NOT EXISTS obs.metrics_v5 ')) ?? '';
    expect(create).to.contain('retention_days UInt16 DEFAULT 90');
    expect(create).to.contain('non_replicated_deduplication_window = 10000');
    expect(create).to.contain('ttl_only_drop_parts = 1');
  });
});
