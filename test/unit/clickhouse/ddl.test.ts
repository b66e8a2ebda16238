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
    expect(local).to.contain("ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/obs/usage_daily_local', '{replica}', (log_records, log_bytes, spans, metric_points))");
    expect(distributed).to.equal('CREATE TABLE IF NOT EXISTS obs.usage_daily ON CLUSTER main AS obs.usage_daily_local ENGINE = Distributed(main, obs, usage_daily_local, cityHash64(tenant_id))');
    expect(storageTable(cluster, 'logs')).to.equal('obs.logs_local');
    expect(queryTable(cluster, 'logs')).to.equal('obs.logs');
  });

  it('points materialized views at the local tables on a cluster', () => {
    const view = createMaterializedView(cluster, 'logs_usage_mv', 'logs', 'usage_daily', 'SELECT tenant_id FROM {from}');
    expect(view).to.equal('CREATE MATERIALIZED VIEW IF NOT EXISTS obs.logs_usage_mv ON CLUSTER main TO obs.usage_daily_local AS\nSELECT tenant_id FROM obs.logs_local');
  });

  it('puts tenant_id first in every signal and usage sort key, on both layouts', () => {
    for (const target of [single, cluster]) {
      const statements = migrations.flatMap((m) => m.statements({ ...target, retention }));
      const keys = statements.flatMap((s) => /ORDER BY (.+)/.exec(s)?.[1] ?? []);
      expect(keys).to.have.length.greaterThanOrEqual(5);
      for (const key of keys) expect(key).to.match(/^\(?tenant_id\b/);
      for (const s of statements) expect(/ON CLUSTER main/.test(s)).to.equal(target.cluster !== undefined);
    }
  });
});
